package opschema

import "strings"

// Kind classifies a schema [Type].
type Kind int

// The kinds of schema types. Base kinds are spelled in schemas as listed in
// their comments; composite kinds carry element types in [Type.Elem] or
// [Type.Elems].
const (
	KindInvalid           Kind = iota
	KindTensor                 // Tensor
	KindInt                    // int (int64)
	KindSymInt                 // SymInt
	KindFloat                  // float (double)
	KindComplex                // complex
	KindBool                   // bool
	KindScalar                 // Scalar (torch's NumberType)
	KindScalarType             // ScalarType (a dtype)
	KindLayout                 // Layout
	KindDevice                 // Device
	KindDeviceIndex            // DeviceIndex
	KindMemoryFormat           // MemoryFormat
	KindStr                    // str
	KindGenerator              // Generator
	KindStorage                // Storage
	KindStream                 // Stream
	KindDimname                // Dimname
	KindQScheme                // QScheme
	KindQuantizer              // Quantizer
	KindConstQuantizerPtr      // ConstQuantizerPtr
	KindCapsule                // Capsule
	KindAny                    // Any
	KindAnyClass               // AnyClassType
	KindAnyEnum                // AnyEnumType
	KindNone                   // None / NoneType
	KindSymFloat               // SymFloat
	KindSymBool                // SymBool
	KindTypeVar                // a lower-case identifier such as t: a type variable, named by Type.Name
	KindClass                  // __torch__.torch.classes.NS.Name: a custom class, named by Type.Name
	KindList                   // T[] or T[N]: Elem, and N when Sized
	KindOptional               // T?: Elem
	KindTuple                  // (T1, T2, ...): Elems
	KindDict                   // Dict(K, V): Elems = [K, V]
	KindUnion                  // Union(T1, T2, ...): Elems
	KindFuture                 // Future(T): Elem
	KindRRef                   // RRef(T): Elem
	KindAwait                  // Await(T): Elem
)

var kindNames = [...]string{
	KindInvalid:           "invalid",
	KindTensor:            "Tensor",
	KindInt:               "int",
	KindSymInt:            "SymInt",
	KindFloat:             "float",
	KindComplex:           "complex",
	KindBool:              "bool",
	KindScalar:            "Scalar",
	KindScalarType:        "ScalarType",
	KindLayout:            "Layout",
	KindDevice:            "Device",
	KindDeviceIndex:       "DeviceIndex",
	KindMemoryFormat:      "MemoryFormat",
	KindStr:               "str",
	KindGenerator:         "Generator",
	KindStorage:           "Storage",
	KindStream:            "Stream",
	KindDimname:           "Dimname",
	KindQScheme:           "QScheme",
	KindQuantizer:         "Quantizer",
	KindConstQuantizerPtr: "ConstQuantizerPtr",
	KindCapsule:           "Capsule",
	KindAny:               "Any",
	KindAnyClass:          "AnyClassType",
	KindAnyEnum:           "AnyEnumType",
	KindNone:              "NoneType",
	KindSymFloat:          "SymFloat",
	KindSymBool:           "SymBool",
	KindTypeVar:           "TypeVar",
	KindClass:             "Class",
	KindList:              "List",
	KindOptional:          "Optional",
	KindTuple:             "Tuple",
	KindDict:              "Dict",
	KindUnion:             "Union",
	KindFuture:            "Future",
	KindRRef:              "RRef",
	KindAwait:             "Await",
}

// String returns the kind's name: the schema spelling for base kinds
// ("Tensor", "int", "SymInt", ...) and "List", "Optional", ... otherwise.
func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(?)"
}

// baseTypes maps the spelling of every base type to its kind, as in torch's
// SchemaTypeParser::parseBaseType (including the spellings newer torch added:
// DeviceIndex, Stream, NoneType, SymInt, complex).
var baseTypes = map[string]Kind{
	"Tensor":            KindTensor,
	"int":               KindInt,
	"SymInt":            KindSymInt,
	"float":             KindFloat,
	"complex":           KindComplex,
	"bool":              KindBool,
	"Scalar":            KindScalar,
	"ScalarType":        KindScalarType,
	"Layout":            KindLayout,
	"Device":            KindDevice,
	"DeviceIndex":       KindDeviceIndex,
	"MemoryFormat":      KindMemoryFormat,
	"str":               KindStr,
	"Generator":         KindGenerator,
	"Storage":           KindStorage,
	"Stream":            KindStream,
	"Dimname":           KindDimname,
	"QScheme":           KindQScheme,
	"Quantizer":         KindQuantizer,
	"ConstQuantizerPtr": KindConstQuantizerPtr,
	"Capsule":           KindCapsule,
	"Any":               KindAny,
	"AnyClassType":      KindAnyClass,
	"AnyEnumType":       KindAnyEnum,
	"None":              KindNone,
	"NoneType":          KindNone,
	"SymFloat":          KindSymFloat,
	"SymBool":           KindSymBool,
}

// Type is a parsed schema type. Alias annotations are not part of the type:
// they live in the [AliasInfo] of the argument or return.
type Type struct {
	Kind  Kind
	Name  string  // the type variable's or custom class's name (KindTypeVar, KindClass)
	Elem  *Type   // element of List, Optional, Future, RRef, Await
	Elems []*Type // members of Tuple and Union; key and value of Dict
	N     int     // fixed size of a List when Sized (int[2])
	Sized bool    // List with a fixed size N

	// Spelling is the type's text as written in the schema, alias
	// annotations included (e.g. "Tensor(a!)[]"); empty for types built in
	// code.
	Spelling string
}

// IsTensorLike reports whether values of the type are tensors or may hold
// tensors directly: Tensor, Tensor?, and lists of those (Tensor[], Tensor?[]).
func (t *Type) IsTensorLike() bool {
	for t != nil {
		switch t.Kind {
		case KindTensor:
			return true
		case KindOptional, KindList:
			t = t.Elem
		default:
			return false
		}
	}
	return false
}

// Unwrap strips Optional layers: Tensor? gives Tensor.
func (t *Type) Unwrap() *Type {
	for t != nil && t.Kind == KindOptional {
		t = t.Elem
	}
	return t
}

// String renders the type in schema syntax without alias annotations, e.g.
// "Tensor?[]", "int[2]", "Dict(str, Tensor)".
func (t *Type) String() string {
	var b strings.Builder
	t.write(&b, nil)
	return b.String()
}

// write renders t; alias, when non-nil, supplies annotations for the
// positions torch's printer puts them (see Argument.String).
func (t *Type) write(b *strings.Builder, alias *AliasInfo) {
	if t == nil {
		b.WriteString("<nil>")
		return
	}
	switch t.Kind {
	case KindList:
		var elem *AliasInfo
		if alias != nil && len(alias.Contained) > 0 {
			elem = alias.Contained[0]
		}
		t.Elem.write(b, elem)
		if t.Sized {
			b.WriteString("[")
			b.WriteString(itoa(t.N))
			b.WriteString("]")
		} else {
			b.WriteString("[]")
		}
		if alias != nil && !alias.isImplicitContainer() {
			alias.writeAnnotation(b)
		}
		return
	case KindOptional:
		t.Elem.write(b, alias)
		b.WriteString("?")
		return
	case KindTuple:
		b.WriteString("(")
		for i, e := range t.Elems {
			if i > 0 {
				b.WriteString(", ")
			}
			e.write(b, nil)
		}
		b.WriteString(")")
	case KindDict, KindUnion:
		b.WriteString(t.Kind.String())
		b.WriteString("(")
		for i, e := range t.Elems {
			if i > 0 {
				b.WriteString(", ")
			}
			e.write(b, nil)
		}
		b.WriteString(")")
	case KindFuture, KindRRef, KindAwait:
		b.WriteString(t.Kind.String())
		b.WriteString("(")
		t.Elem.write(b, nil)
		b.WriteString(")")
	case KindTypeVar, KindClass:
		b.WriteString(t.Name)
	default:
		b.WriteString(t.Kind.String())
	}
	if alias != nil {
		alias.writeAnnotation(b)
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var buf [20]byte
	i := len(buf)
	neg := n < 0
	if neg {
		n = -n
	}
	for n > 0 {
		i--
		buf[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		buf[i] = '-'
	}
	return string(buf[i:])
}
