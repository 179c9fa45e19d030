package gpio

import "unsafe"

// The uAPI v2 of linux/gpio.h (include/uapi/linux/gpio.h), Linux ≥ 5.10.
//
// Every 64-bit field in these structs is __aligned_u64 and the header pads each
// struct explicitly, so every uint64 below sits at an 8-aligned offset and every
// struct's size is a multiple of 8. That makes the Go layout identical on amd64,
// arm64 and 32-bit arm, although Go aligns uint64 to only 4 bytes on arm: no field
// ever relies on alignment padding. The compile-time checks at the end of this file
// and TestUAPIAgainstHeader (which parses /usr/include/linux/gpio.h) hold it there.

// Array bounds from linux/gpio.h.
const (
	maxNameSize    = 32 // GPIO_MAX_NAME_SIZE
	linesMax       = 64 // GPIO_V2_LINES_MAX
	lineNumAttrMax = 10 // GPIO_V2_LINE_NUM_ATTRS_MAX
)

// LineFlag is enum gpio_v2_line_flag: a line's configuration and state bits.
type LineFlag uint64

// Line flags; the header's name follows each.
const (
	LineFlagUsed               LineFlag = 1 << 0  // GPIO_V2_LINE_FLAG_USED
	LineFlagActiveLow          LineFlag = 1 << 1  // GPIO_V2_LINE_FLAG_ACTIVE_LOW
	LineFlagInput              LineFlag = 1 << 2  // GPIO_V2_LINE_FLAG_INPUT
	LineFlagOutput             LineFlag = 1 << 3  // GPIO_V2_LINE_FLAG_OUTPUT
	LineFlagEdgeRising         LineFlag = 1 << 4  // GPIO_V2_LINE_FLAG_EDGE_RISING
	LineFlagEdgeFalling        LineFlag = 1 << 5  // GPIO_V2_LINE_FLAG_EDGE_FALLING
	LineFlagOpenDrain          LineFlag = 1 << 6  // GPIO_V2_LINE_FLAG_OPEN_DRAIN
	LineFlagOpenSource         LineFlag = 1 << 7  // GPIO_V2_LINE_FLAG_OPEN_SOURCE
	LineFlagBiasPullUp         LineFlag = 1 << 8  // GPIO_V2_LINE_FLAG_BIAS_PULL_UP
	LineFlagBiasPullDown       LineFlag = 1 << 9  // GPIO_V2_LINE_FLAG_BIAS_PULL_DOWN
	LineFlagBiasDisabled       LineFlag = 1 << 10 // GPIO_V2_LINE_FLAG_BIAS_DISABLED
	LineFlagEventClockRealtime LineFlag = 1 << 11 // GPIO_V2_LINE_FLAG_EVENT_CLOCK_REALTIME
	LineFlagEventClockHTE      LineFlag = 1 << 12 // GPIO_V2_LINE_FLAG_EVENT_CLOCK_HTE
)

// Attribute ids (enum gpio_v2_line_attr_id).
const (
	attrIDFlags        = 1 // GPIO_V2_LINE_ATTR_ID_FLAGS
	attrIDOutputValues = 2 // GPIO_V2_LINE_ATTR_ID_OUTPUT_VALUES
	attrIDDebounce     = 3 // GPIO_V2_LINE_ATTR_ID_DEBOUNCE
)

// chipInfo is struct gpiochip_info (68 bytes).
type chipInfo struct {
	Name  [maxNameSize]byte // @0  name
	Label [maxNameSize]byte // @32 label
	Lines uint32            // @64 lines
}

// lineAttribute is struct gpio_v2_line_attribute (16 bytes). Data is the union
// {flags u64, values u64, debounce_period_us u32}; on the little-endian machines cand
// supports, debounce_period_us is Data's low 32 bits.
type lineAttribute struct {
	ID      uint32 // @0 id
	Padding uint32 // @4 padding
	Data    uint64 // @8 union { flags; values; debounce_period_us }
}

// lineConfigAttribute is struct gpio_v2_line_config_attribute (24 bytes).
type lineConfigAttribute struct {
	Attr lineAttribute // @0  attr
	Mask uint64        // @16 mask: bit i applies Attr to the request's offsets[i]
}

// lineConfig is struct gpio_v2_line_config (272 bytes).
type lineConfig struct {
	Flags    uint64                              // @0  flags (LineFlag)
	NumAttrs uint32                              // @8  num_attrs
	Padding  [5]uint32                           // @12 padding
	Attrs    [lineNumAttrMax]lineConfigAttribute // @32 attrs
}

// lineRequest is struct gpio_v2_line_request (592 bytes).
type lineRequest struct {
	Offsets         [linesMax]uint32  // @0   offsets
	Consumer        [maxNameSize]byte // @256 consumer
	Config          lineConfig        // @288 config
	NumLines        uint32            // @560 num_lines
	EventBufferSize uint32            // @564 event_buffer_size
	Padding         [5]uint32         // @568 padding
	Fd              int32             // @588 fd: the request's file descriptor, set by the kernel
}

// lineValues is struct gpio_v2_line_values (16 bytes).
type lineValues struct {
	Bits uint64 // @0 bits: bit i is the value of offsets[i]
	Mask uint64 // @8 mask: bit i selects offsets[i]
}

// lineInfo is struct gpio_v2_line_info (256 bytes).
type lineInfo struct {
	Name     [maxNameSize]byte             // @0   name
	Consumer [maxNameSize]byte             // @32  consumer
	Offset   uint32                        // @64  offset
	NumAttrs uint32                        // @68  num_attrs
	Flags    uint64                        // @72  flags (LineFlag)
	Attrs    [lineNumAttrMax]lineAttribute // @80  attrs
	Padding  [4]uint32                     // @240 padding
}

// Sizes of the structs, as the kernel declares them.
const (
	sizeofChipInfo            = 68
	sizeofLineAttribute       = 16
	sizeofLineConfigAttribute = 24
	sizeofLineConfig          = 272
	sizeofLineRequest         = 592
	sizeofLineValues          = 16
	sizeofLineInfo            = 256
)

// Compile-time layout checks: each line fails to build if the Go size differs from the
// kernel's in either direction (too small overflows the uintptr subtraction, too large
// makes an array of the wrong length).
var (
	_ [0]byte = [unsafe.Sizeof(chipInfo{}) - sizeofChipInfo]byte{}
	_ [0]byte = [sizeofChipInfo - unsafe.Sizeof(chipInfo{})]byte{}
	_ [0]byte = [unsafe.Sizeof(lineAttribute{}) - sizeofLineAttribute]byte{}
	_ [0]byte = [sizeofLineAttribute - unsafe.Sizeof(lineAttribute{})]byte{}
	_ [0]byte = [unsafe.Sizeof(lineConfigAttribute{}) - sizeofLineConfigAttribute]byte{}
	_ [0]byte = [sizeofLineConfigAttribute - unsafe.Sizeof(lineConfigAttribute{})]byte{}
	_ [0]byte = [unsafe.Sizeof(lineConfig{}) - sizeofLineConfig]byte{}
	_ [0]byte = [sizeofLineConfig - unsafe.Sizeof(lineConfig{})]byte{}
	_ [0]byte = [unsafe.Sizeof(lineRequest{}) - sizeofLineRequest]byte{}
	_ [0]byte = [sizeofLineRequest - unsafe.Sizeof(lineRequest{})]byte{}
	_ [0]byte = [unsafe.Sizeof(lineValues{}) - sizeofLineValues]byte{}
	_ [0]byte = [sizeofLineValues - unsafe.Sizeof(lineValues{})]byte{}
	_ [0]byte = [unsafe.Sizeof(lineInfo{}) - sizeofLineInfo]byte{}
	_ [0]byte = [sizeofLineInfo - unsafe.Sizeof(lineInfo{})]byte{}
)

// The asm-generic ioctl encoding (include/uapi/asm-generic/ioctl.h), which amd64, arm
// and arm64 all use: nr in bits 0–7, type in 8–15, size in 16–29, direction in 30–31
// (_IOC_WRITE 1, _IOC_READ 2).
const (
	iocSizeShift = 16
	iocR         = 2 << 30       // _IOR
	iocRW        = (2 | 1) << 30 // _IOWR
	iocTypeGPIO  = 0xB4 << 8     // the GPIO ioctls' type byte
)

// ioctl request numbers, computed from the struct sizes like the header's macros; the
// header's name follows each.
const (
	ioctlGetChipInfo   uint32 = iocR | iocTypeGPIO | 0x01 | uint32(unsafe.Sizeof(chipInfo{}))<<iocSizeShift     // GPIO_GET_CHIPINFO_IOCTL
	ioctlGetLineInfo   uint32 = iocRW | iocTypeGPIO | 0x05 | uint32(unsafe.Sizeof(lineInfo{}))<<iocSizeShift    // GPIO_V2_GET_LINEINFO_IOCTL
	ioctlGetLine       uint32 = iocRW | iocTypeGPIO | 0x07 | uint32(unsafe.Sizeof(lineRequest{}))<<iocSizeShift // GPIO_V2_GET_LINE_IOCTL
	ioctlLineSetConfig uint32 = iocRW | iocTypeGPIO | 0x0D | uint32(unsafe.Sizeof(lineConfig{}))<<iocSizeShift  // GPIO_V2_LINE_SET_CONFIG_IOCTL
	ioctlLineGetValues uint32 = iocRW | iocTypeGPIO | 0x0E | uint32(unsafe.Sizeof(lineValues{}))<<iocSizeShift  // GPIO_V2_LINE_GET_VALUES_IOCTL
	ioctlLineSetValues uint32 = iocRW | iocTypeGPIO | 0x0F | uint32(unsafe.Sizeof(lineValues{}))<<iocSizeShift  // GPIO_V2_LINE_SET_VALUES_IOCTL
)
