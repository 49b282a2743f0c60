package tcpexp

import (
	"image/color"

	"gonum.org/v1/plot/plotutil"
)

func plotColor(i int) color.Color { return plotutil.Color(i) }
