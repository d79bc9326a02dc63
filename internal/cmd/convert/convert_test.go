package convert

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/internal/cmdutil"
	"github.com/hopctl/hopctl/internal/iostreams"
	"github.com/hopctl/hopctl/pkg/ir"
)

func TestNewCmdConvert(t *testing.T) {
	tests := []struct {
		args    string
		want    Options
		wantErr string
	}{
		{args: "a.pb b.pbtxt", want: Options{In: "a.pb", Out: "b.pbtxt"}},
		{args: "a.pb - --to json", want: Options{In: "a.pb", Out: "-", To: "json"}},
		{args: "a.pb", wantErr: "convert: missing IN OUT"},
		{args: "a.pb b.pb --to xml", wantErr: `invalid value "xml" for --to`},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			ios, _, _, _ := iostreams.Test()
			var got *Options
			cmd := NewCmdConvert(&cmdutil.Factory{IOStreams: ios}, func(o *Options) error { got = o; return nil })
			cmd.SetArgs(strings.Fields(tt.args))
			cmd.SetOut(io.Discard)
			cmd.SetErr(io.Discard)
			_, err := cmd.ExecuteC()
			if tt.wantErr != "" {
				var fe *cmdutil.FlagError
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.As(err, &fe) {
					t.Fatalf("err = %v, want a FlagError containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.want.IO = ios
			if *got != tt.want {
				t.Errorf("options = %+v, want %+v", *got, tt.want)
			}
		})
	}
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
