package main

import (
	"math"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Item sizes as DynamoDB bills them, following its published rules
// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html):
//
//   - an attribute is its name's UTF-8 bytes plus its value's size;
//   - String: UTF-8 bytes; Binary: raw bytes; Boolean and Null: 1 byte;
//   - Number: 1 byte per two significant digits (leading and trailing zeros
//     trimmed) plus 1 byte; this is the documented approximation, exact to
//     within a byte or two per number;
//   - List and Map: 3 bytes plus, per element, 1 byte plus the element's
//     size (a Map element's size includes its key's bytes);
//   - sets: the sum of their members' sizes.
//
// The 100 bytes per item of index overhead count toward storage only, not
// toward read or write units, so they are left out.

// itemSize is the billed size of an item in bytes; a missing item is 0.
func itemSize(item map[string]types.AttributeValue) int {
	n := 0
	for name, v := range item {
		n += len(name) + valueSize(v)
	}
	return n
}

func valueSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return numberSize(v.Value)
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += 1 + valueSize(e)
		}
		return n
	case *types.AttributeValueMemberM:
		n := 3
		for k, e := range v.Value {
			n += 1 + len(k) + valueSize(e)
		}
		return n
	case *types.AttributeValueMemberSS:
		n := 0
		for _, s := range v.Value {
			n += len(s)
		}
		return n
	case *types.AttributeValueMemberNS:
		n := 0
		for _, s := range v.Value {
			n += numberSize(s)
		}
		return n
	case *types.AttributeValueMemberBS:
		n := 0
		for _, b := range v.Value {
			n += len(b)
		}
		return n
	}
	return 0
}

// numberSize approximates a number's size: ceil(significant digits / 2) + 1.
func numberSize(s string) int {
	mantissa, _, _ := strings.Cut(strings.ToLower(s), "e")
	digits := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, mantissa)
	digits = strings.Trim(digits, "0")
	return (len(digits)+1)/2 + 1
}

// Capacity units (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html):
// a read is 1 unit per 4 KB (strongly consistent) or half that (eventually
// consistent), a write 1 unit per 1 KB; sizes round up, and even a missing
// item or an empty query costs the minimum.

const (
	readBlock  = 4096
	writeBlock = 1024
)

// readUnits is what reading bytes costs (rounded up to 4 KB, at least one block).
func readUnits(bytes int, consistent bool) float64 {
	u := blocks(bytes, readBlock)
	if !consistent {
		return u / 2
	}
	return u
}

// writeUnits is what writing an item of bytes costs (rounded up to 1 KB, at least one).
func writeUnits(bytes int) float64 { return blocks(bytes, writeBlock) }

func blocks(bytes, block int) float64 {
	return math.Max(1, math.Ceil(float64(bytes)/float64(block)))
}
