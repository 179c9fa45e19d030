package envelope

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"

	"cand/config"
)

// File is the envelope's JSON document: its settings and the cells
// done so far, written after each cell.
type File struct {
	Settings Settings `json:"settings"`
	Cells    []Cell   `json:"cells"`
}

// cellKey names one cell.
type cellKey struct {
	board   config.SimBoard
	bitrate uint32
	length  string
}

// order is every cell of the settings: boards, then lengths, then bitrates.
func (f *File) order() []cellKey {
	var ks []cellKey
	for _, b := range f.Settings.Boards {
		for _, l := range f.Settings.Lengths {
			for _, br := range f.Settings.Bitrates {
				ks = append(ks, cellKey{b, br, l})
			}
		}
	}
	return ks
}

// cell is k's result, nil if not done.
func (f *File) cell(k cellKey) *Cell {
	for i := range f.Cells {
		c := &f.Cells[i]
		if c.Board == k.board && c.Bitrate == k.bitrate && c.Length == k.length {
			return c
		}
	}
	return nil
}

// Complete reports whether every cell of the settings is done.
func (f *File) Complete() bool {
	for _, k := range f.order() {
		if f.cell(k) == nil {
			return false
		}
	}
	return true
}

// write stores f at path (through a temporary file, so an interrupted write
// leaves the previous one).
func (f *File) write(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("bench: envelope output directory: %w", err)
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	return nil
}

// Read reads an envelope's JSON document.
func Read(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	var f File
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("bench: %s: %w", path, err)
	}
	return &f, nil
}

// open is the document to resume at path: the one there if its settings
// are set's, a new one if there is none or fresh is true. Other settings are an
// error naming the first that differs: mixing cells of two settings would make
// one table of two measurements.
func open(path string, set Settings, fresh bool) (*File, error) {
	if !fresh {
		f, err := Read(path)
		switch {
		case err == nil:
			if d := settingsDiff(f.Settings, set); d != "" {
				return nil, fmt.Errorf("bench: %s holds an envelope of other settings (%s): add -fresh to start over, or give another -out", path, d)
			}
			return f, nil
		case !errors.Is(err, os.ErrNotExist):
			return nil, fmt.Errorf("%w (add -fresh to start over)", err)
		}
	}
	return &File{Settings: set}, nil
}

// settingsDiff names the first setting whose value differs, "" if none.
func settingsDiff(had, want Settings) string {
	a, b := reflect.ValueOf(had), reflect.ValueOf(want)
	t := a.Type()
	for i := range t.NumField() {
		if !reflect.DeepEqual(a.Field(i).Interface(), b.Field(i).Interface()) {
			return fmt.Sprintf("%s %v there, %v now", t.Field(i).Tag.Get("json"), a.Field(i).Interface(), b.Field(i).Interface())
		}
	}
	return ""
}
