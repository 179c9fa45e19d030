package metrics

import "math"

// The bucket layout is the native-histogram schema 3 of Prometheus: bucket k holds
// values v with 2^((k-1)/8) < v ≤ 2^(k/8) seconds, so bucket 0 ends at 1 s and
// every power of two is split into 8 buckets (factor 2^(1/8) ≈ 1.0905).
const (
	schema = 3
	// bucketsPerOctave is 2^schema.
	bucketsPerOctave = 1 << schema

	// minKey is the bucket of 1 ns: (2^-30 s, 2^(-239/8) s] ≈ (0.93 ns, 1.01 ns].
	minKey = -239
	// maxKey is the bucket of math.MaxInt64 ns ≈ 9.22e9 s: 2^(265/8) s ≈ 9.28e9 s.
	maxKey = 265
	// numBuckets covers every positive int64 nanosecond count exactly.
	numBuckets = maxKey - minKey + 1

	// zeroThreshold (seconds) is the lower edge of bucket minKey, 2^-30 s. The zero
	// bucket [-zeroThreshold, zeroThreshold] holds exactly the observations of 0 ns
	// (and negative ones, which are clamped to 0): no integer nanosecond count lies
	// between 0 and 2^-30 s.
	zeroThreshold = 1.0 / (1 << 30)
)

// Schema-3 boundaries inside one octave, as mantissas in [0.5, 1) the way
// math.Frexp returns them: b_j = 2^(j/8 - 1) (values from bc -l, 40 digits).
const (
	b0 = 0.5
	b1 = 0.5452538663326288296035053278803539894963
	b2 = 0.5946035575013605333587499852802379576465
	b3 = 0.6484197773255048329668770588962255799177
	b4 = 0.7071067811865475244008443621048490392848
	b5 = 0.7711054127039704118061459310453674206534
	b6 = 0.8408964152537145430311254762332148950400
	b7 = 0.9170040432046712317435415947941444280386
)

// octaveStep returns how many of b0…b7 lie strictly below f, for f in [0.5, 1):
// three or four comparisons, no table, no logarithm.
func octaveStep(f float64) int {
	if f > b4 {
		if f > b6 {
			if f > b7 {
				return 8
			}
			return 7
		}
		if f > b5 {
			return 6
		}
		return 5
	}
	if f > b2 {
		if f > b3 {
			return 4
		}
		return 3
	}
	if f > b1 {
		return 2
	}
	if f > b0 {
		return 1
	}
	return 0
}

// octaveBound returns b_j for j in [0, 8).
func octaveBound(j int) float64 {
	switch j {
	case 0:
		return b0
	case 1:
		return b1
	case 2:
		return b2
	case 3:
		return b3
	case 4:
		return b4
	case 5:
		return b5
	case 6:
		return b6
	default:
		return b7
	}
}

// bucketKey returns the schema-3 bucket of a duration of ns > 0 nanoseconds, taken
// as float64(ns)/1e9 seconds, the same float Prometheus would see.
func bucketKey(ns int64) int {
	frac, exp := math.Frexp(float64(ns) / 1e9)
	return (exp-1)*bucketsPerOctave + octaveStep(frac)
}

// upperBound returns the upper edge of bucket key in seconds, 2^(key/8).
func upperBound(key int) float64 {
	j := key & (bucketsPerOctave - 1) // key mod 8, also for negative keys
	octave := (key - j) / bucketsPerOctave
	return math.Ldexp(octaveBound(j), octave+1)
}

// Classic buckets are every fourth schema-3 boundary (powers of √2), from
// 2^-20 s ≈ 0.954 µs to 2^-6.5 s ≈ 11.05 ms: fine enough for microsecond stages,
// exact because each is also a native boundary.
const (
	classicFirstKey = -160 // 2^(-160/8) = 2^-20 s
	classicLastKey  = -52  // 2^(-52/8) = 2^-6.5 s
	classicStep     = 4
	numClassic      = (classicLastKey-classicFirstKey)/classicStep + 1
)
