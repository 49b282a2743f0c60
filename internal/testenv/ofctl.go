package testenv

// Ofctl runs ovs-ofctl without any OVS instance, typically against a
// switch listening on TCP, e.g.
//
//	Ofctl("-O", "OpenFlow10", "dump-flows", "tcp:127.0.0.1:6634")
//
// Each call opens a new OpenFlow connection and sends HELLO; ovs-ofctl
// parses replies strictly, which makes it a good oracle for an encoder.
// The error carries ovs-ofctl's output.
func Ofctl(args ...string) (string, error) {
	return run(nil, "ovs-ofctl", args...)
}
