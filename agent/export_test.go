package agent

// Pica8ForTest exposes the tests' copy of the calibrated agent to
// profile_test.go (package agent_test), which can load the profile.
var Pica8ForTest = pica8
