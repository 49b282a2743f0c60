package calibrate

import (
	"errors"
	"math"
	"sort"
)

// LinearFit is an ordinary least-squares fit y ≈ X·Beta.
type LinearFit struct {
	Beta []float64
	// SE is the standard error of each coefficient (σ̂·sqrt((XᵀX)⁻¹_jj)).
	SE []float64
	// RSS is the residual sum of squares; N the number of samples.
	RSS float64
	N   int
	// RobustSigma is the residuals' scale from their median absolute
	// deviation (1.4826·MAD): what one batch's noise is when a few
	// batches were hit by the host's scheduler. Zero when not computed.
	RobustSigma float64
}

// Sigma is the residual standard deviation.
func (f LinearFit) Sigma() float64 {
	k := len(f.Beta)
	if f.N <= k {
		return math.NaN()
	}
	return math.Sqrt(f.RSS / float64(f.N-k))
}

// BIC is the Bayesian information criterion of the fit with Gaussian
// noise: it trades RSS against the number of parameters when two models
// (layouts, slow-path windows) compete for the same samples.
func (f LinearFit) BIC() float64 {
	n := float64(f.N)
	rss := math.Max(f.RSS, 1e-300)
	return n*math.Log(rss/n) + float64(len(f.Beta))*math.Log(n)
}

var errSingular = errors.New("calibrate: least squares: singular design (a regressor is constant or collinear)")

// leastSquares solves min ||X·b − y||² by the normal equations with each
// column scaled to unit maximum (counts of 10⁴ moves next to a column of
// ones), then Gauss-Jordan elimination with partial pivoting. The designs
// here have 1–5 columns, so the normal equations are well within float64.
func leastSquares(x [][]float64, y []float64) (LinearFit, error) {
	n := len(y)
	if n == 0 || len(x) != n {
		return LinearFit{}, errors.New("calibrate: least squares: no samples")
	}
	k := len(x[0])
	if n < k {
		return LinearFit{}, errors.New("calibrate: least squares: fewer samples than parameters")
	}
	scale := make([]float64, k)
	for _, row := range x {
		for j, v := range row {
			scale[j] = math.Max(scale[j], math.Abs(v))
		}
	}
	for j := range scale {
		if scale[j] == 0 {
			return LinearFit{}, errSingular
		}
	}
	// a = [XᵀX | I], b = Xᵀy, on scaled columns.
	a := make([][]float64, k)
	for i := range a {
		a[i] = make([]float64, 2*k)
		a[i][k+i] = 1
	}
	b := make([]float64, k)
	for r, row := range x {
		for i := 0; i < k; i++ {
			xi := row[i] / scale[i]
			b[i] += xi * y[r]
			for j := 0; j < k; j++ {
				a[i][j] += xi * row[j] / scale[j]
			}
		}
	}
	for col := 0; col < k; col++ {
		piv := col
		for r := col + 1; r < k; r++ {
			if math.Abs(a[r][col]) > math.Abs(a[piv][col]) {
				piv = r
			}
		}
		if math.Abs(a[piv][col]) < 1e-12*float64(n) {
			return LinearFit{}, errSingular
		}
		a[col], a[piv] = a[piv], a[col]
		b[col], b[piv] = b[piv], b[col]
		d := a[col][col]
		for j := range a[col] {
			a[col][j] /= d
		}
		b[col] /= d
		for r := 0; r < k; r++ {
			if r == col || a[r][col] == 0 {
				continue
			}
			f := a[r][col]
			for j := range a[r] {
				a[r][j] -= f * a[col][j]
			}
			b[r] -= f * b[col]
		}
	}
	fit := LinearFit{Beta: make([]float64, k), SE: make([]float64, k), N: n}
	for j := 0; j < k; j++ {
		fit.Beta[j] = b[j] / scale[j]
	}
	for r, row := range x {
		pred := 0.0
		for j, v := range row {
			pred += v * fit.Beta[j]
		}
		d := y[r] - pred
		fit.RSS += d * d
	}
	s2 := 0.0
	if n > k {
		s2 = fit.RSS / float64(n-k)
	}
	for j := 0; j < k; j++ {
		fit.SE[j] = math.Sqrt(math.Max(s2*a[j][k+j], 0)) / scale[j]
	}
	return fit, nil
}

// robustLeastSquares is leastSquares with Huber weights, iterated: a
// batch that the host's scheduler delayed by milliseconds (the switch
// process not running while its FLOW_MODs arrive) must not pull the
// per-insert cost. The scale is the residuals' MAD; k = 1.345 σ keeps 95 %
// efficiency on Gaussian noise.
func robustLeastSquares(x [][]float64, y []float64) (LinearFit, error) {
	f, err := leastSquares(x, y)
	if err != nil {
		return f, err
	}
	n := len(y)
	res := make([]float64, n)
	for iter := 0; iter < 8; iter++ {
		for i, row := range x {
			p := 0.0
			for j, v := range row {
				p += v * f.Beta[j]
			}
			res[i] = y[i] - p
		}
		abs := make([]float64, n)
		for i, r := range res {
			abs[i] = math.Abs(r)
		}
		sort.Float64s(abs)
		sigma := 1.4826 * abs[n/2]
		if sigma == 0 {
			return f, nil
		}
		k := 1.345 * sigma
		wx := make([][]float64, n)
		wy := make([]float64, n)
		for i, row := range x {
			w := 1.0
			if a := math.Abs(res[i]); a > k {
				w = k / a
			}
			sw := math.Sqrt(w)
			wx[i] = make([]float64, len(row))
			for j, v := range row {
				wx[i][j] = v * sw
			}
			wy[i] = y[i] * sw
		}
		nf, err := leastSquares(wx, wy)
		if err != nil {
			return f, nil
		}
		f = nf
	}
	// Report the unweighted RSS so BICs of competing models compare, and
	// the robust scale of the final residuals.
	f.RSS = 0
	abs := make([]float64, n)
	for i, row := range x {
		p := 0.0
		for j, v := range row {
			p += v * f.Beta[j]
		}
		f.RSS += (y[i] - p) * (y[i] - p)
		abs[i] = math.Abs(y[i] - p)
	}
	sort.Float64s(abs)
	f.RobustSigma = 1.4826 * abs[n/2]
	return f, nil
}
