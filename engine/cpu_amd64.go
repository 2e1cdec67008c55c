//go:build !purego

package engine

// CPU features the assembly kernels need, read once with CPUID. The
// kernels run only where both the CPU and the OS support them: the OS
// saves a register set on a switch only if XCR0 says so, and XGETBV may
// be executed only when CPUID says the OS set OSXSAVE.

func cpuid(leaf, sub uint32) (a, b, c, d uint32)

// xgetbv0 returns the low half of XCR0.
func xgetbv0() uint32

const (
	leaf1AVX     = 1 << 28 // ECX
	leaf1OSXSAVE = 1 << 27 // ECX
	leaf1POPCNT  = 1 << 23 // ECX
	leaf7AVX2    = 1 << 5  // EBX
	leaf7AVX512F = 1 << 16 // EBX
	leaf7AVX512V = 1 << 31 // EBX: AVX512VL, the 256-bit forms
	xcr0AVX      = 0x06    // SSE and AVX state
	xcr0AVX512   = 0xe6    // and the opmask, ZMM0-15 upper and ZMM16-31 state
)

// cpuFeatures reports whether the CPU and the OS support AVX2, and
// AVX-512 F and VL with POPCNT.
func cpuFeatures() (avx2, avx512 bool) {
	maxLeaf, _, _, _ := cpuid(0, 0)
	if maxLeaf < 7 {
		return false, false
	}
	_, _, c1, _ := cpuid(1, 0)
	if c1&(leaf1AVX|leaf1OSXSAVE) != leaf1AVX|leaf1OSXSAVE {
		return false, false
	}
	xcr0 := xgetbv0()
	_, b7, _, _ := cpuid(7, 0)
	avx2 = xcr0&xcr0AVX == xcr0AVX && b7&leaf7AVX2 != 0
	avx512 = avx2 && xcr0&xcr0AVX512 == xcr0AVX512 && c1&leaf1POPCNT != 0 &&
		b7&(leaf7AVX512F|leaf7AVX512V) == leaf7AVX512F|leaf7AVX512V
	return avx2, avx512
}

var cpuAVX2, cpuAVX512 = cpuFeatures()
