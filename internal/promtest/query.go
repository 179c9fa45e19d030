package promtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/url"
	"slices"
	"strconv"
	"time"
)

// queryEvery is how often Number asks again.
const queryEvery = 200 * time.Millisecond

// Number runs the instant query again and again until it returns exactly one
// sample whose value is a number (not NaN), and returns that value. Until then
// (no sample yet, a NaN rate over too few scrapes, a failing query) it keeps
// asking; when ctx is done it returns an error with the last reply.
func (s *Server) Number(ctx context.Context, query string) (float64, error) {
	var last string
	for {
		v, raw, err := s.instant(ctx, query)
		if err == nil && !math.IsNaN(v) {
			return v, nil
		}
		last = fmt.Sprintf("%s (err %v)", raw, err)
		select {
		case <-ctx.Done():
			return math.NaN(), fmt.Errorf("%s: no number before the deadline; last reply: %s", query, last)
		case <-time.After(queryEvery):
		}
	}
}

// Values runs the instant query again and again until it returns at least one
// sample whose value is a number (not NaN), and returns the values of all its
// samples (NaN included). Until then it keeps asking; when ctx is done it
// returns an error with the last reply.
func (s *Server) Values(ctx context.Context, query string) ([]float64, error) {
	var last string
	for {
		vs, raw, err := s.vector(ctx, query)
		if err == nil && slices.ContainsFunc(vs, func(v float64) bool { return !math.IsNaN(v) }) {
			return vs, nil
		}
		last = fmt.Sprintf("%s (err %v)", raw, err)
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%s: no number before the deadline; last reply: %s", query, last)
		case <-time.After(queryEvery):
		}
	}
}

// instant runs one instant query and returns its single sample (NaN if there is
// none, or more than one) and the raw reply.
func (s *Server) instant(ctx context.Context, query string) (float64, string, error) {
	vs, raw, err := s.vector(ctx, query)
	if err != nil || len(vs) != 1 {
		return math.NaN(), raw, err
	}
	return vs[0], raw, nil
}

// vector runs one instant query and returns its samples' values and the raw
// reply.
func (s *Server) vector(ctx context.Context, query string) ([]float64, string, error) {
	resp, err := s.get(ctx, "/api/v1/query?query="+url.QueryEscape(query))
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	var raw bytes.Buffer
	var reply struct {
		Status string
		Error  string
		Data   struct{ Result []struct{ Value [2]any } }
	}
	if err := json.NewDecoder(io.TeeReader(resp.Body, &raw)).Decode(&reply); err != nil {
		return nil, raw.String(), err
	}
	if reply.Status != "success" {
		return nil, raw.String(), fmt.Errorf("query failed: %s", reply.Error)
	}
	var vs []float64
	for _, r := range reply.Data.Result {
		value, _ := r.Value[1].(string)
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return nil, raw.String(), err
		}
		vs = append(vs, v)
	}
	return vs, raw.String(), nil
}
