package opschema

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestRegistryLookupBuiltin(t *testing.T) {
	r, err := NewRegistry(nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		target string
		want   string // the schema's Key
	}{
		{"aten.add_.Tensor", "aten::add_.Tensor"},
		{"aten.relu.default", "aten::relu"},
		{"torch.ops.aten.relu.default", "aten::relu"},
		{"aten::relu", "aten::relu"},
		{"aten.native_batch_norm.default", "aten::native_batch_norm"},
		{"prims.convert_element_type.default", "prims::convert_element_type"},
		{"quantized.add.default", "quantized::add"},
		{"prim.TupleIndex.default", "prim::TupleIndex"},
	}
	for _, tc := range tests {
		s, src, ok := r.Lookup(tc.target)
		if !ok || src != SourceBuiltin || s.OpName().Key() != tc.want {
			t.Errorf("Lookup(%q) = %v, %v, %v; want %s from builtin", tc.target, s, src, ok, tc.want)
		}
	}
	// The schema is the real one: add_ writes self.
	s, _, _ := r.Lookup("aten.add_.Tensor")
	if !s.Arguments[0].IsWrite() || !s.IsInplace() {
		t.Errorf("aten.add_.Tensor: %s", s)
	}
}

func TestRegistryUnknown(t *testing.T) {
	r, _ := NewRegistry(nil)
	for _, target := range []string{
		"aten.no_such_op.default",
		"aten.add.no_such_overload",
		"aten.relu",         // a packet, not an overload
		"aten.relu.Tensor",  // relu has only the default overload
		"mylib.foo.default", // a custom op the file does not describe
		"higher_order.no_such_hop",
		"_operator.getitem",
		"",
		"not a target",
	} {
		if s, src, ok := r.Lookup(target); ok || s != nil || src != SourceNone {
			t.Errorf("Lookup(%q) = %v, %v, %v; want not found", target, s, src, ok)
		}
	}
	var nilReg *Registry
	if _, src, ok := nilReg.Lookup("aten.relu.default"); !ok || src != SourceBuiltin {
		t.Errorf("nil registry should still see the builtin table")
	}
}

func TestRegistryFileOverridesBuiltin(t *testing.T) {
	// A graph file from a newer torch may carry a different schema for an
	// op the builtin table knows; the file's wins. Custom ops come only from
	// the file.
	custom := "mylib::foo(Tensor(a!) x, Tensor y) -> ()"
	newer := "aten::native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor(a!)? running_mean, Tensor(b!)? running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)"
	r, err := NewRegistry([]FileSchema{
		{Name: "mylib::foo", Schema: custom},
		{Name: "aten::native_batch_norm", Schema: newer},
		{Schema: "aten::relu(Tensor self) -> Tensor"}, // no name: keyed by the schema
	})
	if err != nil {
		t.Fatal(err)
	}
	s, src, ok := r.Lookup("aten.native_batch_norm.default")
	if !ok || src != SourceFile || s.Text != newer {
		t.Fatalf("Lookup native_batch_norm = %v %v %v", s, src, ok)
	}
	if !s.IsMutable() {
		t.Error("file schema should be the annotated one")
	}
	if builtin, _ := BuiltinTable().Lookup(s.OpName()); builtin.IsMutable() {
		t.Error("torch 1.13's native_batch_norm unexpectedly annotated")
	}
	s, src, ok = r.Lookup("mylib.foo.default")
	if !ok || src != SourceFile || s.Text != custom {
		t.Errorf("Lookup mylib.foo.default = %v %v %v", s, src, ok)
	}
	if _, src, _ := r.Lookup("aten.relu.default"); src != SourceFile {
		t.Errorf("relu from %v, want file", src)
	}
	if _, src, _ := r.Lookup("aten.add.Tensor"); src != SourceBuiltin {
		t.Errorf("add.Tensor from %v, want builtin", src)
	}
	var keys []string
	for _, s := range r.FileSchemas() {
		keys = append(keys, s.OpName().Key())
	}
	if want := []string{"aten::native_batch_norm", "aten::relu", "mylib::foo"}; !slices.Equal(keys, want) {
		t.Errorf("FileSchemas = %v, want %v", keys, want)
	}
}

func TestRegistryFileErrors(t *testing.T) {
	r, err := NewRegistry([]FileSchema{
		{Name: "mylib::ok", Schema: "mylib::ok(Tensor x) -> Tensor"},
		{Name: "mylib::broken", Schema: "mylib::broken(Tensor(a! x) -> Tensor"},
		{Name: "mylib::named_wrong", Schema: "mylib::other(Tensor x) -> Tensor"},
		{Name: "mylib::ok", Schema: "mylib::ok(Tensor x) -> Tensor"},         // same again: fine
		{Name: "mylib::ok", Schema: "mylib::ok(Tensor(a!) x) -> Tensor(a!)"}, // different: error
		{Name: "aten.add.Tensor", Schema: "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"},
	})
	if err == nil {
		t.Fatal("want errors")
	}
	var errs []*SchemaError
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var se *SchemaError
		if !errors.As(e, &se) {
			t.Fatalf("%v is not a *SchemaError", e)
		}
		errs = append(errs, se)
	}
	if len(errs) != 3 || errs[0].Index != 1 || errs[1].Index != 2 || errs[2].Index != 4 {
		t.Fatalf("errors = %v", err)
	}
	var pe *ParseError
	if !errors.As(errs[0], &pe) || pe.Column != 25 {
		t.Errorf("first error should be a parse error at column 25: %v", errs[0])
	}
	if msg := errs[0].Error(); !strings.Contains(msg, "mylib::broken") || !strings.Contains(msg, "column 25") {
		t.Errorf("message %q should name the schema and column", msg)
	}
	if msg := errs[1].Error(); !strings.Contains(msg, "named mylib::named_wrong but the schema is for mylib::other") {
		t.Errorf("message %q", msg)
	}
	// The good entries are usable.
	if _, src, ok := r.Lookup("mylib.ok.default"); !ok || src != SourceFile {
		t.Error("mylib.ok missing")
	}
	if _, src, ok := r.Lookup("aten.add.Tensor"); !ok || src != SourceFile {
		t.Error("target-spelled name not accepted")
	}
	if _, _, ok := r.Lookup("mylib.broken.default"); ok {
		t.Error("broken schema should not be registered")
	}
}

func TestRegistryHOPs(t *testing.T) {
	r, _ := NewRegistry(nil)
	s, src, ok := r.Lookup("higher_order.cond")
	if !ok || src != SourceHOP || s.Arguments[1].Name != "true_fn" {
		t.Fatalf("Lookup(higher_order.cond) = %v %v %v", s, src, ok)
	}
	h, ok := r.HOP("torch.ops.higher_order.cond")
	if !ok || h.Name != "cond" || !h.IsSubgraphArg(1) || !h.IsSubgraphArg(2) || h.IsSubgraphArg(0) {
		t.Fatalf("HOP(cond) = %+v %v", h, ok)
	}
	if _, ok := r.HOP("aten.relu.default"); ok {
		t.Error("relu is no HOP")
	}
	// A file may describe a HOP; the file wins.
	r2, err := NewRegistry([]FileSchema{{Schema: "higher_order::cond(Tensor pred, Any true_fn, Any false_fn, Tensor[] operands) -> Tensor[]"}})
	if err != nil {
		t.Fatal(err)
	}
	if s, src, _ := r2.Lookup("higher_order.cond"); src != SourceFile || s.Arguments[0].Type.Kind != KindTensor {
		t.Errorf("file HOP schema not preferred: %v %v", s, src)
	}
}

func TestHOPTable(t *testing.T) {
	want := []string{
		"associative_scan", "auto_functionalized", "auto_functionalized_v2", "cond",
		"flex_attention", "invoke_quant", "invoke_subgraph", "map_impl", "scan",
		"tag_activation_checkpoint", "while_loop", "with_effects",
		"wrap_with_autocast", "wrap_with_set_grad_enabled",
	}
	all := HOPs()
	if len(hopErrs) > 0 {
		t.Fatalf("HOP schemas do not parse: %v", hopErrs)
	}
	var names []string
	for _, h := range all {
		names = append(names, h.Name)
	}
	if !slices.IsSorted(names) {
		t.Errorf("HOP table not sorted: %v", names)
	}
	for _, w := range want {
		if _, ok := LookupHOP(w); !ok {
			t.Errorf("HOP %s missing", w)
		}
	}
	for _, h := range all {
		s := h.ParsedSchema()
		if s == nil {
			t.Errorf("%s: schema does not parse", h.Name)
			continue
		}
		if s.Target() != h.Target() || h.Target() != "higher_order."+h.Name {
			t.Errorf("%s: targets %s vs %s", h.Name, s.Target(), h.Target())
		}
		if h.Doc == "" {
			t.Errorf("%s: no doc", h.Name)
		}
		if (len(h.Subgraphs) == 0) == (h.Op == "") {
			t.Errorf("%s: wants subgraphs or an op argument (exactly one kind)", h.Name)
		}
	}
	flex, _ := LookupHOP("flex_attention")
	if !flex.IsSubgraphArg(3) || !flex.IsSubgraphArg(4) || flex.IsSubgraphArg(5) {
		t.Errorf("flex_attention subgraphs = %+v", flex.Subgraphs)
	}
	if mm, ok := flex.Subgraph("mask_mod"); !ok || mm.Arg != "block_mask" || !mm.Last {
		t.Errorf("flex_attention mask_mod = %+v", mm)
	}
}

// TestHOPTableBindsToSchemas binds every row of the convention table
// against its own schema (CheckHOP), and checks that CheckHOP catches each
// kind of mistake a row can make.
func TestHOPTableBindsToSchemas(t *testing.T) {
	for _, h := range HOPs() {
		if err := CheckHOP(h); err != nil {
			t.Error(err)
		}
	}
	good := func() *HOP {
		return &HOP{Name: "my_loop", Schema: "higher_order::my_loop(Any body, Any carried, ...) -> ...",
			Subgraphs: []Subgraph{{Arg: "body", Name: "my_loop_body",
				Operands: []Operands{{Arg: "carried"}, {Arg: "*rest"}}, Outputs: &Outputs{Count: "carried"}}},
			MetaChecks:    []MetaCheck{{LHS: "carried", RHS: "body_output", Arg: "carried", Subgraph: "body"}},
			ArgTypeChecks: []ArgTypeCheck{{Args: []string{"carried"}}}}
	}
	if err := CheckHOP(good()); err != nil {
		t.Fatalf("a well-formed row: %v", err)
	}
	for name, edit := range map[string]func(h *HOP){
		"schema names another op": func(h *HOP) { h.Name = "other" },
		"unknown subgraph arg":    func(h *HOP) { h.Subgraphs[0].Arg = "bdy" },
		"subgraph arg not Any":    func(h *HOP) { h.Schema = "higher_order::my_loop(Tensor body, Any carried, ...) -> ..." },
		"unknown operand group":   func(h *HOP) { h.Subgraphs[0].Operands[0].Arg = "carry" },
		"varargs without ...":     func(h *HOP) { h.Schema = "higher_order::my_loop(Any body, Any carried) -> ..." },
		"empty operand group":     func(h *HOP) { h.Subgraphs[0].Operands[0] = Operands{} },
		"unknown output count":    func(h *HOP) { h.Subgraphs[0].Outputs.Count = "init" },
		"meta check arg":          func(h *HOP) { h.MetaChecks[0].Arg = "init" },
		"meta check subgraph":     func(h *HOP) { h.MetaChecks[0].Subgraph = "body_fn" },
		"arg type check arg":      func(h *HOP) { h.ArgTypeChecks[0].Args = []string{"operands"} },
		"no message name":         func(h *HOP) { h.Subgraphs[0].Name = "" },
		"restriction kind":        func(h *HOP) { h.Subgraphs[0].Restrictions = []Restriction{{}} },
		"op arg":                  func(h *HOP) { h.Op = "fn" },
		"no-grad operand group": func(h *HOP) {
			h.Subgraphs[0].Restrictions = []Restriction{{Kind: ForbidMutation, NoGrad: &NoGradRule{Allows: []string{"init"}}}}
		},
		"dynamo accepts row": func(h *HOP) {
			h.Subgraphs[0].Restrictions = []Restriction{{Kind: ForbidMutation, DynamoAccepts: "no-such-row"}}
		},
	} {
		h := good()
		edit(h)
		if err := CheckHOP(h); err == nil {
			t.Errorf("%s: CheckHOP accepted %+v", name, h)
		}
	}
}

func TestTorchVersions(t *testing.T) {
	for _, c := range []struct {
		v       TorchVersions
		version string
		want    bool
	}{
		{TorchVersions{}, "", true},
		{TorchVersions{}, "1.13", true},
		{TorchVersions{From: "2.6"}, "2.5.1", false},
		{TorchVersions{From: "2.6"}, "2.6.0", true},
		{TorchVersions{From: "2.6"}, "", true},
		{TorchVersions{Until: "2.6"}, "2.5", true},
		{TorchVersions{Until: "2.6"}, "2.6", false},
		{TorchVersions{Until: "2.6"}, "2.14", false},
		{TorchVersions{Until: "2.6"}, "", false},
		{TorchVersions{From: "2.4", Until: "2.10"}, "2.9", true},
		{TorchVersions{From: "2.4", Until: "2.10"}, "2.10", false},
	} {
		if got := c.v.Holds(c.version); got != c.want {
			t.Errorf("%+v.Holds(%q) = %v, want %v", c.v, c.version, got, c.want)
		}
	}
}

func TestWithHOPs(t *testing.T) {
	row := &HOP{Name: "my_hop", Doc: "test", Schema: "higher_order::my_hop(Any body, ...) -> ...",
		Subgraphs: []Subgraph{{Arg: "body", Name: "my_hop", Operands: []Operands{{Arg: "*operands"}}}}}
	base, _ := NewRegistry(nil)
	r, err := base.WithHOPs(row)
	if err != nil {
		t.Fatal(err)
	}
	if h, ok := r.HOP("higher_order.my_hop"); !ok || h.ParsedSchema() == nil || h.ArgIndex("*operands") != 1 {
		t.Errorf("HOP(my_hop) = %+v, %v", h, ok)
	}
	if s, src, ok := r.Lookup("higher_order.my_hop"); !ok || src != SourceHOP || s.Arguments[0].Name != "body" {
		t.Errorf("Lookup(my_hop) = %v %v %v", s, src, ok)
	}
	if _, ok := r.HOP("higher_order.cond"); !ok {
		t.Error("the built-in rows are gone")
	}
	if _, ok := base.HOP("higher_order.my_hop"); ok {
		t.Error("WithHOPs changed its receiver")
	}
	if _, err := base.WithHOPs(&HOP{Name: "bad", Schema: "higher_order::bad(Tensor x) -> ...", Subgraphs: []Subgraph{{Arg: "y", Name: "bad"}}}); err == nil {
		t.Error("a row that does not bind to its schema was accepted")
	}
}

func TestConditionalWrites(t *testing.T) {
	r, _ := NewRegistry(nil)
	s, _, ok := r.Lookup("aten.native_batch_norm.default")
	if !ok {
		t.Fatal("native_batch_norm missing")
	}
	got := r.ConditionalWrites(s)
	if len(got) != 1 {
		t.Fatalf("ConditionalWrites = %+v", got)
	}
	cw := got[0]
	if !slices.Equal(cw.Arguments, []string{"running_mean", "running_var"}) || !slices.Equal(cw.Indices, []int{3, 4}) ||
		cw.Condition != "training" || cw.ConditionIndex != 5 || cw.Why == "" {
		t.Errorf("native_batch_norm: %+v", cw)
	}
	// Unconditional.
	s, _, _ = r.Lookup("aten.batch_norm_update_stats.default")
	if cw := ConditionalWrites(s); len(cw) != 1 || cw[0].Condition != "" || cw[0].ConditionIndex != -1 || !slices.Equal(cw[0].Indices, []int{1, 2}) {
		t.Errorf("batch_norm_update_stats: %+v", cw)
	}
	// instance_norm's condition is use_input_stats.
	s, _, _ = r.Lookup("aten.instance_norm.default")
	if cw := ConditionalWrites(s); len(cw) != 1 || cw[0].Condition != "use_input_stats" || cw[0].ConditionIndex != 5 {
		t.Errorf("instance_norm: %+v", cw)
	}
	// An already annotated argument is dropped from the correction.
	half, err := Parse("aten::native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor(a!)? running_mean, Tensor? running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)")
	if err != nil {
		t.Fatal(err)
	}
	if cw := ConditionalWrites(half); len(cw) != 1 || !slices.Equal(cw[0].Arguments, []string{"running_var"}) || !slices.Equal(cw[0].Indices, []int{4}) {
		t.Errorf("half-annotated: %+v", cw)
	}
	// Ops without corrections, a fully annotated schema, and a schema
	// without the condition argument get none.
	for _, schema := range []string{
		"aten::relu(Tensor self) -> Tensor",
		"aten::native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor(a!)? running_mean, Tensor(b!)? running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)",
		"aten::native_batch_norm(Tensor input, Tensor? running_mean, Tensor? running_var) -> Tensor",
		"aten::native_batch_norm.legit(Tensor input, Tensor? running_mean, Tensor? running_var, bool training) -> Tensor",
	} {
		s, err := Parse(schema)
		if err != nil {
			t.Fatal(err)
		}
		if cw := ConditionalWrites(s); len(cw) != 0 {
			t.Errorf("%s: %+v", schema, cw)
		}
	}
	if ConditionalWrites(nil) != nil {
		t.Error("nil schema")
	}
}

// Every correction must apply to its op in the builtin table when torch has
// the op, and must name arguments that exist: a typo would silently disable
// it.
func TestCorrectionsApplyToBuiltin(t *testing.T) {
	tab := BuiltinTable()
	applied := 0
	for _, c := range Corrections() {
		n, err := ParseTarget(c.Op)
		if err != nil {
			t.Fatalf("%s: %v", c.Op, err)
		}
		n.Overload = c.Overload
		s, ok := tab.Lookup(n)
		if !ok {
			t.Logf("%s not in torch %s's table (correction kept for other versions)", n, tab.TorchVersion())
			continue
		}
		cw := ConditionalWrites(s)
		if len(cw) != 1 || len(cw[0].Arguments) != len(c.Arguments) {
			t.Errorf("%s: conditional writes %+v, want all of %v", n, cw, c.Arguments)
			continue
		}
		for _, i := range cw[0].Indices {
			if a := s.Arguments[i]; !a.Type.IsTensorLike() {
				t.Errorf("%s: corrected argument %s is a %s", n, a.Name, a.Type)
			}
		}
		if i := cw[0].ConditionIndex; i >= 0 && s.Arguments[i].Type.Kind != KindBool {
			t.Errorf("%s: condition %s is not a bool", n, cw[0].Condition)
		}
		applied++
	}
	if applied < 10 {
		t.Errorf("only %d corrections apply to torch %s", applied, tab.TorchVersion())
	}
}

// TestHOPOlderForms: the rows of the older forms (which form a call
// follows is hop.Lookup's, by its arguments) read the same argument names
// at the form's positions: torch 2.6's scan with dim and reverse before
// additional_inputs; its invoke_subgraph with the variadic operand group
// "*operands" and its argument type check read from the list "operands".
func TestHOPOlderForms(t *testing.T) {
	h, ok := LookupHOP("scan")
	if !ok {
		t.Fatal("no scan row")
	}
	rows := h.OlderRows()
	if len(rows) != 1 {
		t.Fatalf("scan: %d older rows", len(rows))
	}
	if f := rows[0]; f == h || f.ArgIndex("dim") != 3 || f.ArgIndex("additional_inputs") != 5 || f.ArgIndex("xs") != 2 ||
		f.Implied()["dim"] != "0" || h.Implied() != nil {
		t.Errorf("6 arguments: form %s", f.Schema)
	}
	inv, ok := LookupHOP("invoke_subgraph")
	if !ok {
		t.Fatal("no invoke_subgraph row")
	}
	if rows := inv.OlderRows(); len(rows) != 1 || rows[0].ArgIndex("operands") != 2 || rows[0].Subgraphs[0].Operands[0].Arg != "operands" ||
		rows[0].ArgTypeChecks[0].Args[0] != "operands" || inv.Subgraphs[0].Operands[0].Arg != "*operands" || inv.ArgTypeChecks[0].Args[0] != "*operands" {
		t.Errorf("invoke_subgraph's older rows: %+v (the current row must keep *operands)", rows)
	}
	bad := *h
	bad.OlderForms = []CallForm{{Schema: "higher_order::scan(Any combine_fn, Any init, Any ys, int dim) -> ..."}}
	if err := CheckHOP(&bad); err == nil {
		t.Error("CheckHOP accepted an older form without the row's arguments (xs, additional_inputs)")
	}
}

// TestRegistriesShareParses: a second registry over a table with the same
// texts (as joint builds for each graph it writes) and the built-in line an
// entry repeats get the schemas parsed before, not parses of their own; a
// text that does not parse is refused every time.
func TestRegistriesShareParses(t *testing.T) {
	text := "aten::mul.Tensor(Tensor self, Tensor other) -> Tensor"
	bad := FileSchema{Schema: "aten::broken(Tensor self -> Tensor"}
	one, err := NewRegistry([]FileSchema{{Name: "aten::mul.Tensor", Schema: text}, bad})
	if err == nil {
		t.Fatal("a broken entry: no error")
	}
	// The same texts in storage of their own, as a decoded file holds them.
	two, err := NewRegistry([]FileSchema{{Schema: string([]byte(text))}, {Schema: string([]byte(bad.Schema))}})
	if err == nil {
		t.Fatal("a broken entry, second registry: no error")
	}
	s1, src1, ok1 := one.Lookup("aten.mul.Tensor")
	s2, src2, ok2 := two.Lookup("aten.mul.Tensor")
	if !ok1 || !ok2 || src1 != SourceFile || src2 != SourceFile {
		t.Fatalf("lookups: %v %v, %v %v", ok1, src1, ok2, src2)
	}
	if s1 != s2 {
		t.Errorf("the second registry parsed the entry again")
	}
	if want, _ := Parse(text); s1.String() != want.String() || s1.Text != text {
		t.Errorf("shared schema %q (text %q), Parse gives %q", s1.String(), s1.Text, want.String())
	}
	// An entry repeating a built-in line gets the built-in table's schema
	// (as the lazy table parses it on a lookup: a table of its own, which
	// no other test has looked up in or parsed in full).
	b, ok := newSortedLazyTable("aten_schemas.txt", atenSchemas).Lookup(OpName{Namespace: "aten", Name: "relu"})
	if !ok {
		t.Fatal("no built-in aten::relu")
	}
	three, err := NewRegistry([]FileSchema{{Schema: strings.Clone(b.Text)}})
	if err != nil {
		t.Fatal(err)
	}
	if s, _, _ := three.Lookup("aten.relu.default"); s != b {
		t.Errorf("an entry with the built-in text was parsed again")
	}
}
