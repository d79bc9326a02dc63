package convert

import (
	"testing"

	"github.com/hopctl/hopctl/internal/cmdtest"
	"github.com/hopctl/hopctl/internal/iostreams"
	"github.com/hopctl/hopctl/pkg/ir"
)

func TestNewCmdConvert(t *testing.T) {
	cmdtest.TestFlags(t, NewCmdConvert, func(o *Options, ios *iostreams.IOStreams) { o.IO = ios }, []cmdtest.FlagCase[Options]{
		{Args: "a.pb b.pbtxt", Want: Options{In: "a.pb", Out: "b.pbtxt"}},
		{Args: "a.pb - --to json", Want: Options{In: "a.pb", Out: "-", To: "json"}},
		{Args: "a.pb", WantErr: "convert: missing IN OUT"},
		{Args: "a.pb b.pb --to xml", WantErr: `invalid value "xml" for --to`},
	})
}

func TestOutputEncoding(t *testing.T) {
	tests := []struct {
		out, to string
		want    ir.Encoding
		wantErr bool
	}{
		{"x.pb", "", ir.Binary, false},
		{"x.JSON", "", ir.JSON, false},
		{"x.pbtxt", "", ir.Text, false},
		{"x.textproto", "", ir.Text, false},
		{"x.bin", "", ir.Binary, false},
		{"x.pb", "pbtxt", ir.Text, false},
		{"x", "", ir.EncodingUnknown, true},
		{"-", "", ir.EncodingUnknown, true},
		{"-", "binary", ir.Binary, false},
	}
	for _, tt := range tests {
		got, err := outputEncoding(&Options{Out: tt.out, To: tt.to})
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("outputEncoding(%q, --to %q) = %v, %v", tt.out, tt.to, got, err)
		}
	}
}
