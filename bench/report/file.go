package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"cand/bench"
)

// Write stores the report as dir/bench.json and the RX end-to-end histogram as
// dir/rx_end_to_end.svg, and returns both paths.
func Write(rep *bench.Report, dir string) (jsonPath, svgPath string, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", fmt.Errorf("bench: output directory: %w", err)
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return "", "", err
	}
	jsonPath = filepath.Join(dir, "bench.json")
	if err := os.WriteFile(jsonPath, append(b, '\n'), 0o644); err != nil {
		return "", "", fmt.Errorf("bench: %w", err)
	}
	svgPath = filepath.Join(dir, "rx_end_to_end.svg")
	if err := os.WriteFile(svgPath, SVG(rep), 0o644); err != nil {
		return "", "", fmt.Errorf("bench: %w", err)
	}
	return jsonPath, svgPath, nil
}

// Read reads a report JSON file (bench.json, or a committed baseline).
func Read(path string) (*bench.Report, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	var rep bench.Report
	if err := json.Unmarshal(raw, &rep); err != nil {
		return nil, fmt.Errorf("bench: %s: %w", path, err)
	}
	return &rep, nil
}
