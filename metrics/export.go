package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// histMetric is one histogram sample carrying both native (schema 3) and classic
// buckets. client_golang's const constructors make either a classic
// (MustNewConstHistogram) or a native (NewConstNativeHistogram) histogram, never
// both in one metric, so this fills the client_model message itself; the text
// format then shows the classic buckets and the protobuf format both.
type histMetric struct {
	desc   *prometheus.Desc
	labels []*dto.LabelPair
	h      dto.Histogram
}

var _ prometheus.Metric = (*histMetric)(nil)

func (m *histMetric) Desc() *prometheus.Desc { return m.desc }

func (m *histMetric) Write(out *dto.Metric) error {
	out.Label = m.labels
	out.Histogram = &m.h
	return nil
}

// newHistMetric turns one reading of a Histogram into a metric in seconds.
func newHistMetric(desc *prometheus.Desc, v *histValue, created time.Time, labelValues ...string) prometheus.Metric {
	m := &histMetric{desc: desc, labels: prometheus.MakeLabelPairs(desc, labelValues)}
	h := &m.h
	h.SampleCount = new(v.count)
	h.SampleSum = new(float64(v.sum) / 1e9)
	h.CreatedTimestamp = timestamppb.New(created)

	// Classic: cumulative counts at every fourth native boundary.
	h.Bucket = make([]*dto.Bucket, 0, numClassic)
	cum := v.zero
	i := 0 // next native bucket index not yet added to cum
	for key := classicFirstKey; key <= classicLastKey; key += classicStep {
		for ; i+minKey <= key; i++ {
			cum += v.counts[i]
		}
		h.Bucket = append(h.Bucket, &dto.Bucket{
			CumulativeCount: new(cum),
			UpperBound:      new(upperBound(key)),
		})
	}

	// Native: only non-empty buckets, as spans of consecutive keys with counts
	// delta-encoded across the spans.
	h.Schema = new(int32(schema))
	h.ZeroThreshold = new(float64(zeroThreshold))
	h.ZeroCount = new(v.zero)
	var span *dto.BucketSpan
	prevKey, prevCount := 0, int64(0)
	for i, c := range v.counts {
		if c == 0 {
			continue
		}
		key := i + minKey
		if span == nil || key != prevKey+1 {
			offset := key // the first span's offset is the absolute key
			if span != nil {
				offset = key - prevKey - 1
			}
			span = &dto.BucketSpan{Offset: new(int32(offset)), Length: new(uint32(0))}
			h.PositiveSpan = append(h.PositiveSpan, span)
		}
		*span.Length++
		h.PositiveDelta = append(h.PositiveDelta, int64(c)-prevCount)
		prevKey, prevCount = key, int64(c)
	}
	if len(h.PositiveSpan) == 0 {
		// An empty span marks the histogram as native even without observations.
		h.PositiveSpan = []*dto.BucketSpan{{Offset: new(int32(0)), Length: new(uint32(0))}}
	}
	return m
}
