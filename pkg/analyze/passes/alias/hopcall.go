package alias

import (
	"fmt"
	"slices"

	"github.com/hopctl/hopctl/pkg/analyze"
	"github.com/hopctl/hopctl/pkg/analyze/passes/hopcalls"
	"github.com/hopctl/hopctl/pkg/hop"
	"github.com/hopctl/hopctl/pkg/ir"
	"github.com/hopctl/hopctl/pkg/opschema"
)

// hop analyses a higher-order operator call through the summaries of its
// subgraphs, which the driver analysed first.
func (st *state) hop(id ir.NodeID) error {
	n := &st.g.Nodes[id]
	hc := hopcalls.Of(st.pass).At(id)
	if hc != nil && hc.HOP.Op != "" {
		if hc.HOP.AppliesOp {
			return st.withEffects(id, hc.HOP)
		}
		// Functional by construction (auto_functionalized): the op's outputs
		// and the new values of its mutable arguments are fresh tensors;
		// nothing is written.
		st.vals[id] = seqOf(st.freshFor(n.Val).elems(), true)
		return nil
	}
	if hc != nil && hc.Err != nil {
		st.pass.Report(analyze.Finding{Rule: RuleBadHOPCall, Severity: analyze.Error, Node: n.Name, Message: hc.Err.Error()})
		st.vals[id] = st.freshFor(n.Val)
		return nil
	}
	if hc == nil || hc.Decoded == nil {
		st.unknown(id, fmt.Sprintf("unknown higher-order operator %s: its aliasing and writes are unknown", n.Target))
		st.vals[id] = st.freshFor(n.Val)
		return nil
	}
	call := hc.Decoded
	if err := hop.CheckOutputsExist(st.pass.Module, call); err != nil {
		st.pass.Report(analyze.Finding{Rule: RuleBadHOPCall, Severity: analyze.Error, Node: n.Name, Message: fmt.Sprintf("%s call: %v", call.Op, err)})
	}
	outs := map[int][]storage{}
	nOut := hop.NumOutputs(n)
	for i := range call.Subgraphs {
		sc := &call.Subgraphs[i]
		nOut = max(nOut, len(sc.Outputs))
		if err := st.subgraphCall(id, sc, outs); err != nil {
			return err
		}
	}
	elems := make([]aval, max(nOut, 0))
	for j := range elems {
		if s := outs[j]; len(s) > 0 {
			elems[j] = storAval(s)
			continue
		}
		var ev *ir.Value
		if n.Val != nil && j < len(n.Val.Elems) {
			ev = &n.Val.Elems[j]
		}
		elems[j] = st.freshFor(ev)
	}
	v := seqOf(elems, nOut < 0)
	if n.Val != nil && n.Val.Kind == ir.ValTensor && len(elems) == 1 {
		v = elems[0] // the call's value is one tensor, not a tuple
	}
	st.vals[id] = v
	return nil
}

// subgraphCall applies one subgraph's summary at the call site: its writes
// become writes of the caller's operands, its outputs alias the operands
// they alias, and the HOP's restrictions are checked.
func (st *state) subgraphCall(id ir.NodeID, sc *hop.SubgraphCall, outs map[int][]storage) error {
	n := &st.g.Nodes[id]
	sum, _ := st.pass.Callee(sc.Graph).(*Summary)
	if sum == nil {
		return fmt.Errorf("node %s: subgraph %s was not analysed before its caller", ir.Abbrev(n.Name), ir.Abbrev(ir.DisplayName(sc.Graph)))
	}
	if err := hop.CheckOperands(st.pass.Module, sc); err != nil {
		st.pass.Report(analyze.Finding{Rule: RuleBadHOPCall, Severity: analyze.Error, Node: n.Name, Message: err.Error()})
		return nil
	}
	nph := len(sc.Operands)
	opStor := make([][]storage, nph)
	opVia := make([]ir.NodeID, nph)
	for k, op := range sc.Operands {
		opVia[k] = ir.NoNode
		if op.Arg == nil {
			continue
		}
		opStor[k] = st.argVal(op.Arg).storages()
		if op.Arg.Kind == ir.ArgNode {
			opVia[k] = op.Arg.Ref
		}
	}
	path := sc.Graph
	for _, m := range sum.MutatedPlaceholders {
		prov := m.Prov
		st.bodyInput = sum.inputMetaAt(m.Pos)
		st.write(id, opVia[m.Pos], opStor[m.Pos], &prov, path)
		st.bodyInput = nil
	}
	lv := st.level(id)
	if r := sc.Forbids(opschema.ForbidAlias, lv.version); r != nil {
		if prov, ok := st.aliasAtCall(id, sc, sum, opStor, opVia, lv.version); ok {
			if msg, refused := lv.message(sc, r, true); refused {
				st.pass.Report(analyze.Finding{Rule: RuleHOPAlias, Severity: analyze.Error, Node: n.Name,
					Message: msg, Provenance: &prov, Fix: aliasFix(sc, sum, prov, opschema.TorchDiffers(opschema.DiffAliasInputOnly, lv.version))})
			}
		}
	}
	if r := sc.Forbids(opschema.ForbidMutation, lv.version); r != nil && len(sum.MutatedPlaceholders) > 0 {
		muts := sum.MutatedPlaceholders
		if lv.noGrad(r) {
			// Dynamo lets the subgraph write these operand groups.
			muts = slices.DeleteFunc(slices.Clone(muts), func(m phMutation) bool {
				return m.Pos < len(sc.Operands) && slices.Contains(r.NoGrad.Allows, sc.Operands[m.Pos].Group)
			})
		}
		if msg, refused := lv.message(sc, r, false); refused && len(muts) > 0 {
			m := muts[0]
			prov := st.provenance(id, opVia[m.Pos], &m.Prov, path)
			st.pass.Report(analyze.Finding{Rule: RuleHOPMutation, Severity: analyze.Error, Node: n.Name, Message: msg, Provenance: &prov,
				Fix: mutationFix(sc, sum, m, prov)})
		}
	}
	// What each callee storage is at this call: the union of the operands
	// fed to the placeholders in it, and the first such operand node.
	type callerStorage struct {
		stor []storage
		via  ir.NodeID
	}
	memo := map[storage]*callerStorage{}
	for j, b := range sc.Outputs {
		if b < 0 || b >= len(sum.OutputStorages) {
			continue
		}
		for _, s := range sum.OutputStorages[b] {
			cs := memo[s]
			if cs == nil {
				cs = &callerStorage{via: ir.NoNode}
				for _, pos := range sum.StoragePlaceholders[s] {
					cs.stor = union(cs.stor, opStor[pos])
					if len(opStor[pos]) > 0 && cs.via < 0 {
						cs.via = opVia[pos]
					}
				}
				memo[s] = cs
			}
			outs[j] = union(outs[j], cs.stor)
			if cs.via >= 0 {
				st.setView(id, cs.via)
			}
		}
	}
	return nil
}

// aliasAtCall finds aliasing PyTorch would see when it re-traces the
// subgraph with this call's operands: aliasing inside the subgraph, or two
// (unsliced) operands sharing a storage.
//
// Before torch 2.14 (opschema.DiffAliasInputOnly) only an output aliasing an
// input counts.
func (st *state) aliasAtCall(id ir.NodeID, sc *hop.SubgraphCall, sum *Summary, opStor [][]storage, opVia []ir.NodeID, version string) (analyze.Provenance, bool) {
	if opschema.TorchDiffers(opschema.DiffAliasInputOnly, version) {
		if len(sum.InpOutAlias) == 0 {
			return analyze.Provenance{}, false
		}
		p := sum.InpOutAlias[0]
		via := ir.NoNode
		if p.From < len(sum.InputPos) {
			via = opVia[sum.InputPos[p.From]]
		}
		if a := sum.FirstAlias; a != nil && a.Input == p.From {
			inner := a.Prov
			return st.provenance(id, via, &inner, sc.Graph), true
		}
		prov := st.provenance(id, via, nil, "")
		prov.Path = append(prov.Path, sc.Graph, fmt.Sprintf("output %d aliases input %d", p.To, p.From))
		return prov, true
	}
	if sum.FirstAlias != nil {
		a := sum.FirstAlias
		inner := a.Prov
		via := ir.NoNode
		if a.Input >= 0 && a.Input < len(sum.InputPos) {
			via = opVia[sum.InputPos[a.Input]]
		}
		return st.provenance(id, via, &inner, sc.Graph), true
	}
	if len(sum.InpInpAlias) > 0 {
		p := sum.InpInpAlias[0]
		return analyze.Provenance{InputIndex: -1, Node: st.g.Nodes[id].Name,
			Path: []string{st.g.Nodes[id].Name, sc.Graph, sum.Inputs[p.From], sum.Inputs[p.To]}}, true
	}
	if a, b, ok := sharedOperands(sc.Operands, opStor); ok {
		prov := st.provenance(id, opVia[b], nil, "")
		prov.Path = append(prov.Path, fmt.Sprintf("operands %d and %d share a storage", a, b))
		return prov, true
	}
	return analyze.Provenance{}, false
}

// sharedOperands returns the first pair a < b of unsliced operands that
// share a storage, in (a, b) order, in time linear in the storages: a call
// may pass thousands of operands.
func sharedOperands(ops []hop.Operand, opStor [][]storage) (a, b int, ok bool) {
	// users[s] lists the unsliced operands in storage s, ascending.
	users := map[storage][]int{}
	for k := range ops {
		if ops[k].Sliced {
			continue
		}
		for _, s := range opStor[k] {
			if u := users[s]; len(u) == 0 || u[len(u)-1] != k {
				users[s] = append(u, k)
			}
		}
	}
	for k := range ops {
		if ops[k].Sliced {
			continue
		}
		best := -1
		for _, s := range opStor[k] {
			u := users[s]
			// The first user after k.
			i, _ := slices.BinarySearch(u, k+1)
			if i < len(u) && (best < 0 || u[i] < best) {
				best = u[i]
			}
		}
		if best >= 0 {
			return k, best, true
		}
	}
	return 0, 0, false
}

// callModule analyses a call_module of a graph submodule like an
// invoke_subgraph call without restrictions.
func (st *state) callModule(id ir.NodeID) error {
	n := &st.g.Nodes[id]
	q := ir.Qualify(st.g, n.Target)
	if st.pass.Subgraph(q) == nil {
		st.unknown(id, fmt.Sprintf("call_module %s is not a graph submodule: its aliasing and writes are unknown", n.Target))
		st.vals[id] = st.freshFor(n.Val)
		return nil
	}
	sc := hop.SubgraphCall{Role: "module", Name: n.Target, GetAttr: ir.NoNode, Graph: q}
	for i := range n.Args {
		sc.Operands = append(sc.Operands, hop.Operand{Arg: &n.Args[i]})
	}
	if sum, _ := st.pass.Callee(q).(*Summary); sum != nil {
		for j := 0; j < sum.NumOutputs; j++ {
			sc.Outputs = append(sc.Outputs, j)
		}
	}
	outs := map[int][]storage{}
	if err := st.subgraphCall(id, &sc, outs); err != nil {
		return err
	}
	elems := make([]aval, len(sc.Outputs))
	for j := range elems {
		if s := outs[j]; len(s) > 0 {
			elems[j] = storAval(s)
		} else {
			elems[j] = st.one(st.newStorage())
		}
	}
	v := seqOf(elems, false)
	// A module returning a single value is not a tuple.
	if len(elems) == 1 && (n.Val == nil || n.Val.Kind == ir.ValTensor) {
		v = elems[0]
	}
	st.vals[id] = v
	return nil
}

// ruleLevel is what decides which of PyTorch's HOP rules apply to a
// module, and in which words: the torch release, the level of the graph
// (analyze.DynamoLevel) and the grad mode it was traced under.
type ruleLevel struct {
	version string
	// dynamo: a Dynamo-level module under a release whose Dynamo checks
	// HOP subgraphs (2.14); dynamoUnchecked: one under a release whose
	// Dynamo does not (opschema.DiffDynamoUnchecked26).
	dynamo, dynamoUnchecked bool
	gradEnabled             bool
	// exportUnchecked: torch.export's training IR under a release that
	// exports it unchecked (opschema.DiffExportTraining26).
	exportUnchecked bool
}

// exportTrainingIR reports whether m is a torch.export program in the
// training IR (its verifiers are TRAINING: the default export, before
// run_decompositions).
func exportTrainingIR(m *ir.Module) bool {
	v, ok := m.Annotation("torch.export.verifiers")
	return ok && v == "TRAINING"
}

func (st *state) level(id ir.NodeID) ruleLevel {
	v := st.pass.TorchVersion()
	d := st.pass.DynamoLevel()
	unchecked := opschema.TorchDiffers(opschema.DiffDynamoUnchecked26, v)
	return ruleLevel{version: v, dynamo: d && !unchecked, dynamoUnchecked: d && unchecked, gradEnabled: st.pass.GradEnabledAt(st.g, id),
		exportUnchecked: st.pass.Module != nil && exportTrainingIR(st.pass.Module) && opschema.TorchDiffers(opschema.DiffExportTraining26, v)}
}

// noGrad reports whether r's grad-disabled form applies: a Dynamo-level
// module traced with grad disabled, under a release whose Dynamo relaxes r.
func (l ruleLevel) noGrad(r *opschema.Restriction) bool {
	return l.dynamo && !l.gradEnabled && r.NoGrad != nil
}

// message returns the words PyTorch refuses a break of restriction r in
// subgraph sc with (alias: aliasing, else mutation), and false when
// torch.compile accepts it at this level:
//
//   - make_fx/AOT level (ATen graphs): _check_alias_and_mutation's words,
//     or the release's own (opschema.HOPMessage26), or the row's Message;
//   - Dynamo level, torch 2.14: Dynamo's (opschema.DynamoMutationMessage,
//     DynamoAliasMessage); with grad disabled, the row's NoGrad rule:
//     Dynamo's own words for what it still refuses (scan, map), else
//     AOTAutograd's re-trace refuses it in the make_fx words;
//   - Dynamo level, torch 2.6: Dynamo checks nothing; what AOTAutograd
//     accepts (DynamoAccepts) passes, the rest is refused in its words;
//   - a check only Dynamo makes (DynamoOnly: BaseHOPs) is refused in
//     Dynamo's words on Dynamo-level modules of releases whose Dynamo
//     checks, and accepted everywhere else.
func (l ruleLevel) message(sc *hop.SubgraphCall, r *opschema.Restriction, alias bool) (string, bool) {
	if l.exportUnchecked {
		return "", false
	}
	if l.dynamoUnchecked && r.DynamoAccepts != "" && opschema.TorchDiffers(r.DynamoAccepts, l.version) {
		return "", false
	}
	if r.DynamoOnly && !l.dynamo {
		return "", false
	}
	if r.Message != "" {
		return r.Message, true
	}
	if l.dynamo {
		switch {
		case !l.noGrad(r) && alias:
			return opschema.DynamoAliasMessage, true
		case !l.noGrad(r):
			return opschema.DynamoMutationMessage, true
		case r.NoGrad.Message != "":
			return r.NoGrad.Message, true
		}
	}
	if m, ok := opschema.HOPMessage26(sc.Name, alias); ok && opschema.TorchDiffers(opschema.DiffMessages26, l.version) {
		return m, true
	}
	if alias {
		return sc.Name + " might be aliasing the input or the output!", true
	}
	return sc.Name + " might be modifying the input!", true
}
