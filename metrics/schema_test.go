package metrics

import (
	"math"
	"testing"
)

func TestBucketKeyKnownValues(t *testing.T) {
	for _, tc := range []struct {
		ns  int64
		key int
	}{
		{1, minKey},             // (2^-30, 2^(-239/8)] s ≈ (0.93, 1.01] ns
		{953, -160},             // 953 ns < 2^-20 s = 953.674… ns
		{954, -159},             // just above 2^-20 s
		{1000, -159},            // 1 µs: 8·log2(1e-6) = -159.45
		{10_000, -132},          // 10 µs: -132.88
		{100_000, -106},         // 100 µs: -106.30
		{1_000_000, -79},        // 1 ms: -79.73
		{100_000_000, -26},      // 100 ms: -26.58
		{999_999_999, 0},        // just below 1 s
		{1_000_000_000, 0},      // 1 s is bucket 0's upper bound, inclusive
		{1_000_000_001, 1},      // just above
		{2_000_000_000, 8},      // 2 s
		{math.MaxInt64, maxKey}, // ≈ 9.22e9 s
	} {
		if got := bucketKey(tc.ns); got != tc.key {
			t.Errorf("bucketKey(%d) = %d, want %d", tc.ns, got, tc.key)
		}
	}
}

// Every bucket from 1 ns to ~2^53 ns that holds a whole nanosecond count: the
// largest count not above its upper bound lands in it, the next count in a higher
// bucket whose range holds it.
func TestBucketKeyAtEveryBoundary(t *testing.T) {
	in := func(ns int64, key int) bool {
		v := float64(ns) / 1e9
		return upperBound(key-1) < v && v <= upperBound(key)
	}
	tested := 0
	for key := minKey; key < 8*23; key++ {
		ns := int64(math.Floor(upperBound(key) * 1e9))
		if !in(ns, key) {
			continue // no whole nanosecond count in this bucket
		}
		tested++
		if got := bucketKey(ns); got != key {
			t.Fatalf("bucketKey(%d) = %d, want %d", ns, got, key)
		}
		if got := bucketKey(ns + 1); got <= key || !in(ns+1, got) {
			t.Fatalf("bucketKey(%d) = %d, want the bucket above %d that holds it", ns+1, got, key)
		}
	}
	if tested < 8*23-(-160) {
		t.Fatalf("only %d buckets tested", tested)
	}
}

func TestUpperBound(t *testing.T) {
	for _, tc := range []struct {
		key  int
		want float64
	}{
		{0, 1}, {8, 2}, {-8, 0.5}, {-160, 1.0 / (1 << 20)}, {-240, zeroThreshold},
		{4, math.Sqrt2}, {-52, math.Exp2(-6.5)}, {-1, math.Exp2(-1.0 / 8)}, {3, math.Exp2(3.0 / 8)},
	} {
		if got := upperBound(tc.key); math.Abs(got-tc.want) > 1e-15*tc.want {
			t.Errorf("upperBound(%d) = %v, want %v", tc.key, got, tc.want)
		}
	}
	if numClassic != 28 {
		t.Errorf("numClassic = %d, want 28 (2^-20 … 2^-6.5 s in steps of √2)", numClassic)
	}
}
