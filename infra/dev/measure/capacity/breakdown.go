package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// breakdown prints where an item's billed bytes go: each attribute's name
// and value bytes, largest first, and inside maps and lists of maps the
// same one level down, so that encoding overhead (long names, NULLs, empty
// lists) shows next to content.
func breakdown(w io.Writer, title string, item map[string]types.AttributeValue) {
	fmt.Fprintf(w, "%s: %d B billed\n", title, itemSize(item))
	printAttrs(w, "  ", item)
}

func printAttrs(w io.Writer, indent string, m map[string]types.AttributeValue) {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.SortFunc(names, func(a, b string) int {
		if d := len(b) + valueSize(m[b]) - len(a) - valueSize(m[a]); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	for _, k := range names {
		v := m[k]
		fmt.Fprintf(w, "%s%-22s name %3d + value %4d = %4d B  %s\n", indent, k, len(k), valueSize(v), len(k)+valueSize(v), kindOf(v))
		switch v := v.(type) {
		case *types.AttributeValueMemberM:
			printAttrs(w, indent+"  ", v.Value)
		case *types.AttributeValueMemberL:
			for i, e := range v.Value {
				if em, ok := e.(*types.AttributeValueMemberM); ok {
					fmt.Fprintf(w, "%s  [%d] %d B\n", indent, i, valueSize(e))
					printAttrs(w, indent+"    ", em.Value)
				}
			}
		}
	}
}

// kindOf names a value's type, and says when it holds nothing.
func kindOf(v types.AttributeValue) string {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return "S"
	case *types.AttributeValueMemberN:
		return "N"
	case *types.AttributeValueMemberNULL:
		return "NULL"
	case *types.AttributeValueMemberBOOL:
		return "BOOL"
	case *types.AttributeValueMemberL:
		if len(v.Value) == 0 {
			return "L (empty)"
		}
		return fmt.Sprintf("L (%d)", len(v.Value))
	case *types.AttributeValueMemberM:
		return fmt.Sprintf("M (%d)", len(v.Value))
	}
	return fmt.Sprintf("%T", v)
}
