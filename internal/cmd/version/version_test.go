package version

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/hopctl/hopctl/internal/cmdtest"

	"github.com/hopctl/hopctl/internal/build"
	"github.com/hopctl/hopctl/internal/cmdutil"
	"github.com/hopctl/hopctl/internal/iostreams"
	"github.com/hopctl/hopctl/pkg/ir"
)

func TestVersionRun(t *testing.T) {
	saved := build.Version
	t.Cleanup(func() { build.Version = saved })
	build.Version = "9.8.7" // as -ldflags -X would set it

	ios, _, out, _ := iostreams.Test()
	if err := versionRun(&Options{IO: ios, Format: "text"}); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("hopctl 9.8.7\ngraph format %d.%d\ngo", ir.FormatMajor, ir.FormatMinor); !strings.HasPrefix(out.String(), want) {
		t.Errorf("text output %q", out)
	}
	out.Reset()
	if err := versionRun(&Options{IO: ios, Format: "json"}); err != nil {
		t.Fatal(err)
	}
	var info Info
	if err := json.Unmarshal(out.Bytes(), &info); err != nil {
		t.Fatal(err)
	}
	if info != Current() || info.Version != "9.8.7" {
		t.Errorf("json output %+v, want %+v", info, Current())
	}
}

func TestNewCmdVersion(t *testing.T) {
	got, _, err := cmdtest.Parse(NewCmdVersion, "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	if got.Format != "json" {
		t.Errorf("format = %q", got.Format)
	}
	if cmdutil.UsesConfig(NewCmdVersion(&cmdutil.Factory{}, nil)) {
		t.Error("version loads the configuration")
	}
}
