package engine

import (
	"github.com/storel/storel/ir"
)

// fuseRange, fuseArray and fuseScalarBody recognize hot loop shapes and
// return loops with the body fused in; nil means "use the general loop".
func (c *compiler) fuseRange(e *ir.Expr, lo, hi intFn, ks, vs int) *loop { return nil }

func (c *compiler) fuseArray(e *ir.Expr, cl *cell, open func(*frame) (srcState, bool), ks, vs int) *loop {
	return nil
}

func (c *compiler) fuseScalarBody(e *ir.Expr, acc int) bodyFn { return nil }
