package ir

import "strings"

// dtypeSizes are the dtypes torch has (torch/_C/__init__.pyi's dtype
// members, c10/core/ScalarType.h), each with its element size in bytes:
// the names dtypeAbbrs abbreviates and the quantized dtypes. The packed
// sub-byte dtypes count one byte per element, a lower bound.
var dtypeSizes = map[string]int64{
	"bool": 1, "uint8": 1, "int8": 1, "bits8": 1, "bits1x8": 1, "bits2x4": 1, "bits4x2": 1,
	"float8_e4m3fn": 1, "float8_e5m2": 1, "float8_e4m3fnuz": 1, "float8_e5m2fnuz": 1,
	"float8_e8m0fnu": 1, "float8_e8m0fnu_x4": 1, "float4_e2m1fn_x2": 1,
	"qint8": 1, "quint8": 1, "quint4x2": 1, "quint2x4": 1,
	"int16": 2, "uint16": 2, "float16": 2, "bfloat16": 2, "bits16": 2, "half": 2, "short": 2,
	"int32": 4, "uint32": 4, "float32": 4, "complex32": 4, "qint32": 4, "float": 4, "int": 4,
	"int64": 8, "uint64": 8, "float64": 8, "complex64": 8, "double": 8, "long": 8, "cfloat": 8,
	"complex128": 16, "cdouble": 16,
}

// layouts are torch's tensor layouts (torch.strided, torch.sparse_coo, …;
// c10/core/Layout.h), by the name the bridge writes; "" is unrecorded.
var layouts = map[string]bool{
	"": true, "strided": true, "sparse_coo": true, "sparse_csr": true, "sparse_csc": true,
	"sparse_bsr": true, "sparse_bsc": true, "_mkldnn": true, "jagged": true,
}

// dtypeSize is the element size of a dtype ("float32" or "torch.float32")
// in bytes; ok is false for a name torch does not have. An unrecorded
// dtype ("") counts as one byte.
func dtypeSize(dtype string) (size int64, ok bool) {
	d := strings.TrimPrefix(dtype, "torch.")
	if d == "" {
		return 1, true
	}
	size, ok = dtypeSizes[d]
	return size, ok
}

// ElementSize is the element size of a dtype torch has, in bytes; ok is
// false for an unrecorded dtype ("") and a name torch does not have.
func ElementSize(dtype string) (size int64, ok bool) {
	if dtype == "" {
		return 0, false
	}
	return dtypeSize(dtype)
}
