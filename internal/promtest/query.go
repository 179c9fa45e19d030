package promtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/url"
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

// instant runs one instant query and returns its single sample (NaN if there is
// none, or more than one) and the raw reply.
func (s *Server) instant(ctx context.Context, query string) (float64, string, error) {
	resp, err := s.get(ctx, "/api/v1/query?query="+url.QueryEscape(query))
	if err != nil {
		return math.NaN(), "", err
	}
	defer resp.Body.Close()
	var raw bytes.Buffer
	var reply struct {
		Status string
		Error  string
		Data   struct{ Result []struct{ Value [2]any } }
	}
	if err := json.NewDecoder(io.TeeReader(resp.Body, &raw)).Decode(&reply); err != nil {
		return math.NaN(), raw.String(), err
	}
	if reply.Status != "success" {
		return math.NaN(), raw.String(), fmt.Errorf("query failed: %s", reply.Error)
	}
	if len(reply.Data.Result) != 1 {
		return math.NaN(), raw.String(), nil
	}
	value, _ := reply.Data.Result[0].Value[1].(string)
	v, err := strconv.ParseFloat(value, 64)
	return v, raw.String(), err
}
