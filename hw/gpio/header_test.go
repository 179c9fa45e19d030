package gpio

import (
	"encoding/binary"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// headerPath is the kernel's uAPI header (Debian package linux-libc-dev).
const headerPath = "/usr/include/linux/gpio.h"

// referenceSizes are the struct sizes listed in the reference fact file
// (bcm283x-userspace-access.md §5), identical on amd64, arm and arm64.
var referenceSizes = map[string]uintptr{
	"gpiochip_info":                 68,
	"gpio_v2_line_attribute":        16,
	"gpio_v2_line_config_attribute": 24,
	"gpio_v2_line_config":           272,
	"gpio_v2_line_request":          592,
	"gpio_v2_line_values":           16,
	"gpio_v2_line_event":            48,
	"gpio_v2_line_info":             256,
}

// goStructs maps each C struct to the Go type that mirrors it field by field.
// gpio_v2_line_event is checked through Event.Encode instead.
var goStructs = map[string]reflect.Type{
	"gpiochip_info":                 reflect.TypeOf(chipInfo{}),
	"gpio_v2_line_attribute":        reflect.TypeOf(lineAttribute{}),
	"gpio_v2_line_config_attribute": reflect.TypeOf(lineConfigAttribute{}),
	"gpio_v2_line_config":           reflect.TypeOf(lineConfig{}),
	"gpio_v2_line_request":          reflect.TypeOf(lineRequest{}),
	"gpio_v2_line_values":           reflect.TypeOf(lineValues{}),
	"gpio_v2_line_info":             reflect.TypeOf(lineInfo{}),
}

// cHeader is the part of linux/gpio.h this package mirrors, parsed textually.
type cHeader struct {
	defines map[string]string
	enums   map[string]int64 // enumerator → value
	structs map[string][]cMember
}

// cMember is one struct member; a union is one member whose variants are in union.
type cMember struct {
	typ   string // "__u32", "char", "struct gpio_v2_line_attribute", "union"
	name  string
	count int // array length; 1 for a scalar
	union []cMember
}

func readHeader(t *testing.T) *cHeader {
	t.Helper()
	src, err := os.ReadFile(headerPath)
	if err != nil {
		t.Fatalf("reading the kernel's GPIO uAPI header: %v: install linux-libc-dev (apt-get install linux-libc-dev)", err)
	}
	h, err := parseHeader(string(src))
	if err != nil {
		t.Fatalf("parsing %s: %v", headerPath, err)
	}
	return h
}

var (
	reComment = regexp.MustCompile(`(?s)/\*.*?\*/|//[^\n]*`)
	reDefine  = regexp.MustCompile(`(?m)^#define[ \t]+(\w+)[ \t]+(.*?)[ \t]*$`)
	reEnum    = regexp.MustCompile(`(?s)enum(?:\s+\w+)?\s*\{(.*?)\}\s*;`)
	reStruct  = regexp.MustCompile(`struct\s+(\w+)\s*\{`)
	reMember  = regexp.MustCompile(`^((?:struct\s+)?\w+)\s+(\w+)(?:\s*\[\s*(\w+)\s*\])?$`)
	reBitULL  = regexp.MustCompile(`^_BITULL\((\d+)\)$`)
)

func parseHeader(src string) (*cHeader, error) {
	src = reComment.ReplaceAllString(src, "")
	h := &cHeader{defines: map[string]string{}, enums: map[string]int64{}, structs: map[string][]cMember{}}
	for _, m := range reDefine.FindAllStringSubmatch(src, -1) {
		h.defines[m[1]] = m[2]
	}
	for _, m := range reEnum.FindAllStringSubmatch(src, -1) {
		next := int64(0)
		for _, item := range strings.Split(m[1], ",") {
			item = strings.TrimSpace(item)
			if item == "" {
				continue
			}
			name, val, hasVal := strings.Cut(item, "=")
			name, val = strings.TrimSpace(name), strings.TrimSpace(val)
			if hasVal {
				if b := reBitULL.FindStringSubmatch(val); b != nil {
					n, _ := strconv.Atoi(b[1])
					next = 1 << n
				} else {
					v, err := strconv.ParseInt(val, 0, 64)
					if err != nil {
						return nil, fmt.Errorf("enumerator %s = %q: %v", name, val, err)
					}
					next = v
				}
			}
			h.enums[name] = next
			next++
		}
	}
	for _, loc := range reStruct.FindAllStringSubmatchIndex(src, -1) {
		name := src[loc[2]:loc[3]]
		body, ok := braceBody(src, loc[1]-1)
		if !ok {
			return nil, fmt.Errorf("struct %s: unbalanced braces", name)
		}
		members, err := h.parseMembers(body)
		if err != nil {
			return nil, fmt.Errorf("struct %s: %v", name, err)
		}
		h.structs[name] = members
	}
	return h, nil
}

// braceBody returns the text between the brace at open and its match.
func braceBody(s string, open int) (string, bool) {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return s[open+1 : i], true
			}
		}
	}
	return "", false
}

func (h *cHeader) parseMembers(body string) ([]cMember, error) {
	var out []cMember
	for len(strings.TrimSpace(body)) > 0 {
		body = strings.TrimSpace(body)
		if strings.HasPrefix(body, "union") {
			open := strings.IndexByte(body, '{')
			inner, ok := braceBody(body, open)
			if !ok {
				return nil, fmt.Errorf("unbalanced union")
			}
			variants, err := h.parseMembers(inner)
			if err != nil {
				return nil, err
			}
			out = append(out, cMember{typ: "union", name: "union", count: 1, union: variants})
			rest := body[open+len(inner)+2:]
			_, body, _ = strings.Cut(rest, ";")
			continue
		}
		stmt, rest, ok := strings.Cut(body, ";")
		if !ok {
			return nil, fmt.Errorf("member %q without ';'", body)
		}
		body = rest
		m := reMember.FindStringSubmatch(strings.Join(strings.Fields(stmt), " "))
		if m == nil {
			return nil, fmt.Errorf("cannot parse member %q", stmt)
		}
		mem := cMember{typ: m[1], name: m[2], count: 1}
		if m[3] != "" {
			n, err := h.number(m[3])
			if err != nil {
				return nil, fmt.Errorf("member %s: %v", mem.name, err)
			}
			mem.count = int(n)
		}
		out = append(out, mem)
	}
	return out, nil
}

// number evaluates a literal or a #define that is one.
func (h *cHeader) number(s string) (int64, error) {
	if d, ok := h.defines[s]; ok {
		s = d
	}
	return strconv.ParseInt(s, 0, 64)
}

// cField is one member placed by the C layout rules.
type cField struct {
	cMember
	offset, size, elemSize uintptr
}

// layout places the members of struct name with the C rules of amd64/arm/arm64 for
// the types the v2 uAPI uses, returning the fields, the size and the alignment.
func (h *cHeader) layout(name string) (fields []cField, size, align uintptr, err error) {
	members, ok := h.structs[name]
	if !ok {
		return nil, 0, 0, fmt.Errorf("struct %s not in the header", name)
	}
	align = 1
	for _, m := range members {
		es, ea, err := h.sizeAlign(m)
		if err != nil {
			return nil, 0, 0, fmt.Errorf("%s.%s: %v", name, m.name, err)
		}
		size = (size + ea - 1) &^ (ea - 1)
		fields = append(fields, cField{cMember: m, offset: size, size: es * uintptr(m.count), elemSize: es})
		size += es * uintptr(m.count)
		align = max(align, ea)
	}
	size = (size + align - 1) &^ (align - 1)
	return fields, size, align, nil
}

func (h *cHeader) sizeAlign(m cMember) (size, align uintptr, err error) {
	switch {
	case m.typ == "union":
		align = 1
		for _, v := range m.union {
			s, a, err := h.sizeAlign(v)
			if err != nil {
				return 0, 0, err
			}
			size, align = max(size, s*uintptr(v.count)), max(align, a)
		}
		return (size + align - 1) &^ (align - 1), align, nil
	case strings.HasPrefix(m.typ, "struct "):
		_, s, a, err := h.layout(strings.TrimPrefix(m.typ, "struct "))
		return s, a, err
	}
	switch m.typ {
	case "char", "__u8":
		return 1, 1, nil
	case "__u32", "__s32", "int":
		return 4, 4, nil
	case "__aligned_u64":
		return 8, 8, nil
	}
	// Plain __u64 is only 4-aligned on i386; the v2 structs do not use it.
	return 0, 0, fmt.Errorf("type %s not handled", m.typ)
}

// normalize maps a C member name and a Go field name to the same spelling.
func normalize(s string) string { return strings.ToLower(strings.ReplaceAll(s, "_", "")) }

func TestHeaderConstants(t *testing.T) {
	h := readHeader(t)
	defines := map[string]int64{
		"GPIO_MAX_NAME_SIZE":         maxNameSize,
		"GPIO_V2_LINES_MAX":          linesMax,
		"GPIO_V2_LINE_NUM_ATTRS_MAX": lineNumAttrMax,
	}
	for name, want := range defines {
		got, err := h.number(name)
		if err != nil {
			t.Errorf("#define %s: %v", name, err)
		} else if got != want {
			t.Errorf("#define %s = %d in the header, %d in Go", name, got, want)
		}
	}
	enums := map[string]int64{
		"GPIO_V2_LINE_FLAG_USED":                 int64(LineFlagUsed),
		"GPIO_V2_LINE_FLAG_ACTIVE_LOW":           int64(LineFlagActiveLow),
		"GPIO_V2_LINE_FLAG_INPUT":                int64(LineFlagInput),
		"GPIO_V2_LINE_FLAG_OUTPUT":               int64(LineFlagOutput),
		"GPIO_V2_LINE_FLAG_EDGE_RISING":          int64(LineFlagEdgeRising),
		"GPIO_V2_LINE_FLAG_EDGE_FALLING":         int64(LineFlagEdgeFalling),
		"GPIO_V2_LINE_FLAG_OPEN_DRAIN":           int64(LineFlagOpenDrain),
		"GPIO_V2_LINE_FLAG_OPEN_SOURCE":          int64(LineFlagOpenSource),
		"GPIO_V2_LINE_FLAG_BIAS_PULL_UP":         int64(LineFlagBiasPullUp),
		"GPIO_V2_LINE_FLAG_BIAS_PULL_DOWN":       int64(LineFlagBiasPullDown),
		"GPIO_V2_LINE_FLAG_BIAS_DISABLED":        int64(LineFlagBiasDisabled),
		"GPIO_V2_LINE_FLAG_EVENT_CLOCK_REALTIME": int64(LineFlagEventClockRealtime),
		"GPIO_V2_LINE_FLAG_EVENT_CLOCK_HTE":      int64(LineFlagEventClockHTE),
		"GPIO_V2_LINE_ATTR_ID_FLAGS":             attrIDFlags,
		"GPIO_V2_LINE_ATTR_ID_OUTPUT_VALUES":     attrIDOutputValues,
		"GPIO_V2_LINE_ATTR_ID_DEBOUNCE":          attrIDDebounce,
		"GPIO_V2_LINE_EVENT_RISING_EDGE":         EventRisingEdge,
		"GPIO_V2_LINE_EVENT_FALLING_EDGE":        EventFallingEdge,
	}
	for name, want := range enums {
		got, ok := h.enums[name]
		if !ok {
			t.Errorf("%s is not in %s", name, headerPath)
		} else if got != want {
			t.Errorf("%s = %#x in the header, %#x in Go", name, got, want)
		}
	}
	// A flag added by a newer kernel is reported, not failed: it needs no support here.
	for name, v := range h.enums {
		if strings.HasPrefix(name, "GPIO_V2_LINE_FLAG_") {
			if _, ok := enums[name]; !ok {
				t.Logf("header has %s = %#x, which this package does not declare", name, v)
			}
		}
	}
}

func TestHeaderStructLayouts(t *testing.T) {
	h := readHeader(t)
	for cname, ref := range referenceSizes {
		fields, size, _, err := h.layout(cname)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if size != ref {
			t.Errorf("struct %s: %d bytes laid out from the header, %d in the reference", cname, size, ref)
		}
		typ, ok := goStructs[cname]
		if !ok {
			continue
		}
		if typ.Size() != size {
			t.Errorf("struct %s: Go %v is %d bytes, the header's %d", cname, typ, typ.Size(), size)
		}
		if typ.NumField() != len(fields) {
			t.Errorf("struct %s: Go %v has %d fields, the header %d members", cname, typ, typ.NumField(), len(fields))
			continue
		}
		for i, cf := range fields {
			gf := typ.Field(i)
			want := cf.name
			if cf.typ == "union" {
				want = "data" // lineAttribute.Data carries the union
				checkAttrUnion(t, h, cname, cf.union)
			}
			if normalize(gf.Name) != normalize(want) {
				t.Errorf("struct %s member %d: %s in the header, %s in Go", cname, i, cf.name, gf.Name)
			}
			if gf.Offset != cf.offset {
				t.Errorf("struct %s.%s: offset %d in the header, %d in Go", cname, cf.name, cf.offset, gf.Offset)
			}
			if gf.Type.Size() != cf.size {
				t.Errorf("struct %s.%s: %d bytes in the header, %d in Go", cname, cf.name, cf.size, gf.Type.Size())
			}
			if cf.count > 1 && (gf.Type.Kind() != reflect.Array || gf.Type.Len() != cf.count) {
				t.Errorf("struct %s.%s: array of %d in the header, %v in Go", cname, cf.name, cf.count, gf.Type)
			}
			if cf.typ == "__aligned_u64" && gf.Type.Kind() != reflect.Uint64 {
				t.Errorf("struct %s.%s: __aligned_u64 in the header, %v in Go", cname, cf.name, gf.Type)
			}
			if strings.HasPrefix(cf.typ, "struct ") {
				elem := gf.Type
				if elem.Kind() == reflect.Array {
					elem = elem.Elem()
				}
				if goStructs[strings.TrimPrefix(cf.typ, "struct ")] != elem {
					t.Errorf("struct %s.%s: %s in the header, %v in Go", cname, cf.name, cf.typ, gf.Type)
				}
			}
		}
	}
}

// The reference's offsets, checked directly with unsafe.Offsetof on each GOARCH.
func TestReferenceOffsets(t *testing.T) {
	var (
		ci  chipInfo
		la  lineAttribute
		lca lineConfigAttribute
		lc  lineConfig
		lr  lineRequest
		lv  lineValues
		li  lineInfo
	)
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"gpiochip_info.label", unsafe.Offsetof(ci.Label), 32},
		{"gpiochip_info.lines", unsafe.Offsetof(ci.Lines), 64},
		{"gpio_v2_line_attribute.padding", unsafe.Offsetof(la.Padding), 4},
		{"gpio_v2_line_attribute.union", unsafe.Offsetof(la.Data), 8},
		{"gpio_v2_line_config_attribute.mask", unsafe.Offsetof(lca.Mask), 16},
		{"gpio_v2_line_config.num_attrs", unsafe.Offsetof(lc.NumAttrs), 8},
		{"gpio_v2_line_config.padding", unsafe.Offsetof(lc.Padding), 12},
		{"gpio_v2_line_config.attrs", unsafe.Offsetof(lc.Attrs), 32},
		{"gpio_v2_line_request.consumer", unsafe.Offsetof(lr.Consumer), 256},
		{"gpio_v2_line_request.config", unsafe.Offsetof(lr.Config), 288},
		{"gpio_v2_line_request.num_lines", unsafe.Offsetof(lr.NumLines), 560},
		{"gpio_v2_line_request.event_buffer_size", unsafe.Offsetof(lr.EventBufferSize), 564},
		{"gpio_v2_line_request.padding", unsafe.Offsetof(lr.Padding), 568},
		{"gpio_v2_line_request.fd", unsafe.Offsetof(lr.Fd), 588},
		{"gpio_v2_line_values.mask", unsafe.Offsetof(lv.Mask), 8},
		{"gpio_v2_line_info.consumer", unsafe.Offsetof(li.Consumer), 32},
		{"gpio_v2_line_info.offset", unsafe.Offsetof(li.Offset), 64},
		{"gpio_v2_line_info.num_attrs", unsafe.Offsetof(li.NumAttrs), 68},
		{"gpio_v2_line_info.flags", unsafe.Offsetof(li.Flags), 72},
		{"gpio_v2_line_info.attrs", unsafe.Offsetof(li.Attrs), 80},
		{"gpio_v2_line_info.padding", unsafe.Offsetof(li.Padding), 240},
		{"sizeof gpiochip_info", unsafe.Sizeof(ci), 68},
		{"sizeof gpio_v2_line_attribute", unsafe.Sizeof(la), 16},
		{"sizeof gpio_v2_line_config_attribute", unsafe.Sizeof(lca), 24},
		{"sizeof gpio_v2_line_config", unsafe.Sizeof(lc), 272},
		{"sizeof gpio_v2_line_request", unsafe.Sizeof(lr), 592},
		{"sizeof gpio_v2_line_values", unsafe.Sizeof(lv), 16},
		{"sizeof gpio_v2_line_info", unsafe.Sizeof(li), 256},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
}

// gpio_v2_line_event has no Go mirror: Event.Encode writes it at byte offsets, which
// must be the header's.
func TestHeaderEventLayout(t *testing.T) {
	h := readHeader(t)
	fields, size, _, err := h.layout("gpio_v2_line_event")
	if err != nil {
		t.Fatal(err)
	}
	if size != EventSize {
		t.Fatalf("struct gpio_v2_line_event is %d bytes in the header, EventSize %d", size, EventSize)
	}
	e := Event{TimestampNs: 0x0102030405060708, ID: 0x11121314, Offset: 0x21222324, Seqno: 0x31323334, LineSeqno: 0x41424344}
	b := make([]byte, EventSize)
	for i := range b {
		b[i] = 0xEE // Encode must zero the padding
	}
	e.Encode(b)
	want := map[string]uint64{
		"timestamp_ns": e.TimestampNs, "id": uint64(e.ID), "offset": uint64(e.Offset),
		"seqno": uint64(e.Seqno), "line_seqno": uint64(e.LineSeqno), "padding": 0,
	}
	for _, f := range fields {
		v, ok := want[f.name]
		if !ok {
			t.Errorf("gpio_v2_line_event.%s is not encoded by Event", f.name)
			continue
		}
		field := b[f.offset : f.offset+f.size]
		var got uint64
		switch f.size {
		case 8:
			got = binary.LittleEndian.Uint64(field)
		case 4:
			got = uint64(binary.LittleEndian.Uint32(field))
		default: // padding array
			for _, c := range field {
				got |= uint64(c)
			}
		}
		if got != v {
			t.Errorf("gpio_v2_line_event.%s at offset %d: encoded %#x, want %#x", f.name, f.offset, got, v)
		}
	}
}

func TestHeaderIoctls(t *testing.T) {
	h := readHeader(t)
	re := regexp.MustCompile(`^_IO(R|W|WR)\(\s*(\w+)\s*,\s*(\w+)\s*,\s*struct\s+(\w+)\s*\)$`)
	for _, c := range []struct {
		name string
		got  uint32
		ref  uint32 // from the reference fact file
	}{
		{"GPIO_GET_CHIPINFO_IOCTL", ioctlGetChipInfo, 0x8044B401},
		{"GPIO_V2_GET_LINEINFO_IOCTL", ioctlGetLineInfo, 0xC100B405},
		{"GPIO_V2_GET_LINE_IOCTL", ioctlGetLine, 0xC250B407},
		{"GPIO_V2_LINE_SET_CONFIG_IOCTL", ioctlLineSetConfig, 0xC110B40D},
		{"GPIO_V2_LINE_GET_VALUES_IOCTL", ioctlLineGetValues, 0xC010B40E},
		{"GPIO_V2_LINE_SET_VALUES_IOCTL", ioctlLineSetValues, 0xC010B40F},
	} {
		if c.got != c.ref {
			t.Errorf("%s = %#x, the reference says %#x", c.name, c.got, c.ref)
		}
		def, ok := h.defines[c.name]
		if !ok {
			t.Errorf("%s is not defined in %s", c.name, headerPath)
			continue
		}
		m := re.FindStringSubmatch(def)
		if m == nil {
			t.Errorf("%s: cannot parse %q", c.name, def)
			continue
		}
		dir := map[string]uint32{"R": 2, "W": 1, "WR": 3}[m[1]]
		typ, err1 := strconv.ParseUint(m[2], 0, 8)
		nr, err2 := strconv.ParseUint(m[3], 0, 8)
		_, size, _, err3 := h.layout(m[4])
		if err1 != nil || err2 != nil || err3 != nil {
			t.Errorf("%s: %q: %v %v %v", c.name, def, err1, err2, err3)
			continue
		}
		want := dir<<30 | uint32(size)<<16 | uint32(typ)<<8 | uint32(nr)
		if c.got != want {
			t.Errorf("%s = %#x in Go, %#x from the header's %s", c.name, c.got, want, def)
		}
	}
}

// checkAttrUnion pins the union Data stands for: flags and values are 64-bit, and
// debounce_period_us is a u32 at the union's start (Data's low half, little-endian).
func checkAttrUnion(t *testing.T, h *cHeader, cname string, variants []cMember) {
	t.Helper()
	want := map[string]string{"flags": "__aligned_u64", "values": "__aligned_u64", "debounce_period_us": "__u32"}
	if len(variants) != len(want) {
		t.Errorf("struct %s: union has %d variants, want %d", cname, len(variants), len(want))
	}
	for _, v := range variants {
		if want[v.name] != v.typ || v.count != 1 {
			t.Errorf("struct %s: union variant %s %s[%d] not expected", cname, v.typ, v.name, v.count)
		}
	}
}
