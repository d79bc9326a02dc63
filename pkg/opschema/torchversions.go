package opschema

import (
	"strconv"
	"strings"
)

// TorchDifference is one way PyTorch's HOP rules differ between releases:
// a row of the version table that hopctl's checks consult with the torch
// version a file records (or --torch-version / HOPCTL_TORCH_VERSION).
// Torch is the releases that behave as What says; the others behave as the
// newest release. hopctl verifies two releases, Debian's 2.6.0 and 2.14.1
// (testdata/hops_real/torch2.6 and testdata/hops_real: the same programs
// traced by each, with each one's verdicts); a boundary of "2.14" means
// "differs in 2.6, verified as described in 2.14": the change lies between.
type TorchDifference struct {
	ID     string
	Torch  TorchVersions
	What   string
	Source string // the PyTorch sources the rule is read from, per release
	// Change is the PyTorch pull request that made the change, with the
	// release it shipped in as its issue tracker says ("" where hopctl
	// has not located it): what a finding reported by some releases only
	// cites.
	Change string
}

// Version table rows.
const (
	// DiffAliasInputOnly: a subgraph aliases only when an output aliases
	// an input.
	DiffAliasInputOnly = "alias-input-output-only"
	// DiffMessages26: the alias/mutation messages of torch 2.6.
	DiffMessages26 = "hop-messages-2.6"
	// DiffCondSameMetadata: cond branch outputs must match in shape and
	// stride too (no merging into unbacked SymInts).
	DiffCondSameMetadata = "cond-same-metadata"
	// DiffMapOutputs26: map_impl itself refuses non-tensor body outputs,
	// with its own words.
	DiffMapOutputs26 = "map-outputs-2.6"
	// DiffScanXsLength26: scan() does not compare the xs leaves' scan
	// dimension sizes.
	DiffScanXsLength26 = "scan-xs-length-2.6"
	// DiffAssocScanGrad26: associative_scan has no autograd.
	DiffAssocScanGrad26 = "associative-scan-grad-2.6"
	// DiffScanGrad26: scan has no autograd.
	DiffScanGrad26 = "scan-grad-2.6"
	// DiffWhileLoopGrad26: while_loop has no autograd.
	DiffWhileLoopGrad26 = "while-loop-grad-2.6"
	// DiffCondBackward26: cond's backward takes (*grads, *operands) and
	// returns a gradient for every operand.
	DiffCondBackward26 = "cond-backward-2.6"
	// DiffInvokeSubgraph26: invoke_subgraph's autograd names its calls
	// ___forward_/___backward_<identifier> and passes a tangent for every
	// output.
	DiffInvokeSubgraph26 = "invoke-subgraph-grad-2.6"
	// DiffDynamoUnchecked26: Dynamo checks no HOP subgraph for mutation or
	// aliasing; AOTAutograd accepts cond and while_loop writes.
	DiffDynamoUnchecked26 = "dynamo-unchecked-2.6"
	// DiffExportTraining26: torch.export's training IR is not checked for
	// HOP input mutation or aliasing.
	DiffExportTraining26 = "export-training-unchecked-2.6"
	// DiffWhileMeta26: while_loop compares body_fn's outputs with the
	// carried inputs in check_outputs_carry_consistency.
	DiffWhileMeta26 = "while-meta-2.6"
	// DiffScanForm26: scan's call passes dim and reverse.
	DiffScanForm26 = "scan-form-2.6"
	// DiffScanCarry26: trace_scan compares init and carry in its own way.
	DiffScanCarry26 = "scan-carry-2.6"
	// DiffScanAlias26: scan's combine_fn is not refused for aliasing.
	DiffScanAlias26 = "scan-alias-2.6"
	// DiffAssocSparse26: associative_scan() refuses sparse xs in Dynamo's
	// words.
	DiffAssocSparse26 = "assoc-sparse-2.6"
	// DiffScanZeroLength26: scan() refuses a zero-length scan dimension.
	DiffScanZeroLength26 = "scan-zero-length-2.6"
	// DiffMinCutRecompute113: min-cut's list of recomputable ops.
	DiffMinCutRecompute113 = "mincut-recompute-1.13"
	// DiffBatchNormEvalStats113: native_batch_norm's eval-mode statistics
	// are empty at runtime though the trace's metadata gives them C elements.
	DiffBatchNormEvalStats113 = "batch-norm-eval-stats-1.13"
)

var torchDifferences = []TorchDifference{
	{ID: DiffAliasInputOnly, Torch: TorchVersions{Until: "2.14"},
		What: "a HOP subgraph is refused for aliasing only when one of its outputs aliases one of its inputs; outputs aliasing each " +
			"other and operands sharing a storage are accepted (cond_out_out_alias traces in 2.6, is refused in 2.14)",
		Source: "2.6.0: torch/_higher_order_ops/utils.py _detect_input_alias; 2.14.1: has_potential_input_alias_or_mutation " +
			"(inp_inp_alias, inp_out_alias and out_out_alias of check_input_alias_and_mutation)"},
	{ID: DiffMessages26, Torch: TorchVersions{Until: "2.14"},
		What: "alias/mutation refusals are worded per HOP: \"One of torch.cond branch might be modifying the input! Consider cloning " +
			"the input before modifying it.\", \"torch.while_loop's body_fn might be aliasing the input!\", \"torch.map is mutating the input!\"",
		Source: "2.6.0: torch/_higher_order_ops/{cond,while_loop,map}.py functionalization rules; 2.14.1: utils.py _check_alias_and_mutation"},
	{ID: DiffCondSameMetadata, Torch: TorchVersions{Until: "2.14"},
		What: "cond branch outputs must have the same metadata, shape and stride included (\"Expected each tensor to have same metadata " +
			"but got:\"); 2.14 merges different sizes into unbacked SymInts and checks dtype, device, layout, dim and storage offset",
		Source: "2.6.0: torch/_higher_order_ops/cond.py trace_cond (_extract_tensor_metadata); 2.14.1: cond.py _merge_output"},
	{ID: DiffMapOutputs26, Torch: TorchVersions{Until: "2.14"},
		What: "a map body returning a non-tensor (other than None) is refused by map_impl's own tracing: \"Expect outputs of map only " +
			"contains tensors or None. Got types [...]\"; 2.14's map_impl accepts it and Dynamo refuses the program (\"HOP: non " +
			"torch.Tensor leaf\", map_out_int in both corpora)",
		Source: "2.6.0: torch/_higher_order_ops/map.py MapAutogradOp / create_fw_bw_graph; 2.14.1: torch/_dynamo/variables/higher_order_ops.py " +
			"(MapHigherOrderVariable, non-tensor leaf)"},
	{ID: DiffScanXsLength26, Torch: TorchVersions{Until: "2.14"},
		What: "scan() does not check that the xs leaves share one scan dimension size (scan_xs_len traces in 2.6); 2.14 refuses it: " +
			"\"All xs leaves must have the same scan dimension size\"",
		Source: "2.6.0: torch/_higher_order_ops/scan.py scan (checks only x.shape[dim] != 0); 2.14.1: scan.py scan _validate_input"},
	{ID: DiffAssocScanGrad26, Torch: TorchVersions{Until: "2.14"},
		What: "associative_scan is not differentiable: \"Autograd not implemented for associative_scan\" (hopctl joint refuses it, " +
			"exit 3); 2.14 differentiates it (AssociativeScanAutogradOp, xs only)",
		Source: "2.6.0: torch/_higher_order_ops/associative_scan.py (autograd_not_implemented on DispatchKey.Autograd); " +
			"2.14.1: associative_scan.py AssociativeScanAutogradOp"},
	{ID: DiffScanGrad26, Torch: TorchVersions{Until: "2.14"},
		What: "scan is not differentiable: its outputs' grad_fn is an autograd_not_implemented node, so backward raises \"Autograd " +
			"not implemented for scan\" and torch.autograd.grad(..., allow_unused=True) returns None for every operand (hopctl joint " +
			"refuses it, exit 3; python/tests/test_joint.py asserts both in 2.6); 2.14 differentiates it (ScanAutogradOp)",
		Source: "2.6.0: torch/_higher_order_ops/scan.py (autograd_not_implemented(scan_op, deferred_error=True); scan()'s docstring: " +
			"\"It currently does not support autograd\"); 2.14.1: scan.py ScanAutogradOp"},
	{ID: DiffWhileLoopGrad26, Torch: TorchVersions{Until: "2.14"},
		What: "while_loop is not differentiable: \"Autograd not implemented for while_loop\" when the gradient is computed " +
			"(hopctl joint refuses it, exit 3); 2.14 differentiates it (WhileLoopAutogradOp: a while_loop_stack_output forward, " +
			"a reverse while_loop backward), added by the pytorch/pytorch#160375 stack (September 2025)",
		Source: "2.6.0: torch/_higher_order_ops/while_loop.py (autograd_not_implemented(while_loop_op, deferred_error=True)); " +
			"2.14.1: while_loop.py WhileLoopAutogradOp, WhileLoopStackOutputOp"},
	{ID: DiffCondBackward26, Torch: TorchVersions{Until: "2.14"},
		What: "cond's backward is cond(pred, joint_true, joint_false, [*grads, *operands]) over create_fw_bw_graph joints " +
			"((*tangents, *primals) → a gradient for every operand, a SymInt's included); 2.14 passes [*operands, *grads] to " +
			"create_bw_fn joints and keeps one gradient per tensor operand (create_fn_remove_none; fill_none_with_masks restores the Nones)",
		Source: "2.6.0: torch/_higher_order_ops/cond.py CondAutogradOp.backward, create_fw_bw_graph_branches; 2.14.1: cond.py " +
			"CondAutogradOp.backward (create_bw_fn, utils.py create_fn_remove_none, fill_none_with_masks)"},
	{ID: DiffInvokeSubgraph26, Torch: TorchVersions{Until: "2.14"},
		What: "invoke_subgraph's backward: the forward call is named ___forward_<identifier>, the backward " +
			"invoke_subgraph(bw_graph, ___backward_<identifier>, (*operands, *tangents)) takes a tangent for every output and " +
			"every output requires grad (an autograd.Function); 2.14 names them fw_<identifier> and bw_<identifier>_<n>, passes " +
			"tangents only for outputs that require grad and marks the others non-differentiable",
		Source: "2.6.0: torch/_higher_order_ops/invoke_subgraph.py InvokeSubgraphAutogradOp, create_fw_bw_graph; 2.14.1: the same " +
			"class (lazy backward, filtered grad_outs, get_non_differentiable_indices)"},
	{ID: DiffDynamoUnchecked26, Torch: TorchVersions{Until: "2.14"},
		What: "at the Dynamo level (torch.compile), Dynamo checks no HOP subgraph for input mutation or aliasing, in any grad mode; " +
			"AOTAutograd then accepts cond and while_loop writes to their operands (cond_mutate, while_mutate compile) and refuses " +
			"map's writes and aliasing with 2.6's words. 2.14's Dynamo refuses writes and aliasing (\"Encountered input mutation during " +
			"higher order op tracing\") unless grad is disabled, when cond, while_loop, scan and map may write some operands",
		Source: "2.6.0: torch/_dynamo/variables/higher_order_ops.py speculate_subgraph (no mutation or aliasing check); 2.14.1: " +
			"check_aliasing_and_input_mutation, supports_input_mutation = not torch.is_grad_enabled(); " +
			"testdata/hops_real/dynamo and testdata/hops_real/torch2.6/dynamo (python/tools/hop_corpus_dynamo.py)"},
	{ID: DiffExportTraining26, Torch: TorchVersions{Until: "2.14"},
		What: "torch.export's training IR (an ExportedProgram whose verifiers are TRAINING, the default export) is not checked for " +
			"HOP input mutation or aliasing: strict export's Dynamo speculates the subgraphs unchecked and pre-dispatch tracing does " +
			"not functionalize, so a cond branch returning a view of its operand exports (testdata/releases/cond_view.pt2, the " +
			"shape of pytorch/pytorch#158375 → huggingface/transformers#39488); run_decompositions() then refuses the aliasing in " +
			"make_fx's words. 2.14's export refuses it (\"Encountered aliasing during higher order op tracing\")",
		Source: "2.6.0: torch/_dynamo/variables/higher_order_ops.py speculate_subgraph (no check), torch/_higher_order_ops/cond.py " +
			"cond_func (the check, under functionalization only); 2.14.1: higher_order_ops.py check_aliasing_and_input_mutation; " +
			"testdata/releases/verdicts.json (python/tools/make_releases.py)",
		// ydwu4 on pytorch/pytorch#153832 names #146658 as the PR that added
		// the input-output aliasing checks; #158375 ("torch 2.8 RC regression
		// - part 2") is transformers' export refused by the 2.8 RC, fixed
		// by huggingface/transformers#39488's .clone()s. The row's bound stays
		// the release verified here. Not checked at a release tag: no
		// pytorch/pytorch history can be read here (its snapshot is over the
		// fetch limit), so the other rows leave Change empty rather than
		// date a PR by its merge.
		Change: "pytorch/pytorch#146658 in 2.8"},
	{ID: DiffWhileMeta26, Torch: TorchVersions{Until: "2.14"},
		What: "while_loop compares body_fn's outputs with the carried inputs pair by zipped pair (different counts pass: while_count " +
			"traces in 2.6), requires_grad and memory_format included, worded \"Expected carried_inputs and body outputs return tensors " +
			"with same metadata but found:\" and one line per pair; 2.14 calls check_meta_consistency (\"Expected carried_inputs and " +
			"body_output to have same number of outputs ...\", \"... same metadata but found:\")",
		Source: "2.6.0: torch/_higher_order_ops/while_loop.py check_outputs_carry_consistency; 2.14.1: while_loop.py " +
			"while_loop_fake_tensor_mode → utils.py check_meta_consistency"},
	{ID: DiffScanForm26, Torch: TorchVersions{Until: "2.14"},
		What: "scan is called scan(combine_fn, init, xs, dim, reverse, additional_inputs): xs sliced along dim, reversed when reverse " +
			"is set; 2.14 calls scan(combine_fn, init, xs, additional_inputs), its scan() having moved dim to 0 and flipped xs. hopctl " +
			"reads both forms (opschema.HOP.OlderForms) whatever the release selected: the form is what the file holds",
		Source: "2.6.0: torch/_higher_order_ops/scan.py ScanOp.__call__, run_flattened_scan; 2.14.1: scan.py ScanOp.__call__"},
	{ID: DiffScanCarry26, Torch: TorchVersions{Until: "2.14"},
		What: "trace_scan compares each init with its carry pair by zipped pair (different counts pass: scan_count traces) in device, " +
			"dtype and shape only (other strides pass: scan_carry_stride traces), and the first differing pair raises \"Expected metadata " +
			"of the combine_fn result <the carry's TensorMetadata> to be the same as the metadata of init with <the init>\" " +
			"(scan_carry_dtype; MetaCheck.Init26); 2.14 calls check_meta_consistency(init, carry)",
		Source: "2.6.0: torch/_higher_order_ops/scan.py trace_scan; 2.14.1: scan.py trace_scan → utils.py check_meta_consistency"},
	{ID: DiffScanAlias26, Torch: TorchVersions{Until: "2.14"},
		What: "scan's combine_fn is never refused for aliasing: the check traces the functionalized combine_fn, whose outputs " +
			"are copies (scan_alias and scan_alias_xs trace in 2.6); its writes are refused as \"Combine_fn might be modifying " +
			"the input!\"; 2.14 refuses both (\"scan might be aliasing the input or the output!\")",
		Source: "2.6.0: torch/_higher_order_ops/scan.py scan_functionalize (_has_potential_branch_input_alias(functional_combine_fn, " +
			"...)); 2.14.1: scan.py scan_functionalize → utils.py _check_alias_and_mutation"},
	{ID: DiffAssocSparse26, Torch: TorchVersions{Until: "2.14"},
		What: "associative_scan() compiles the call with Dynamo before its own input checks, and Dynamo refuses sparse xs: " +
			"\"torch.compile does not support sparse Tensors\"; 2.14's _validate_input: \"xs leaves must dense Tensors, consider " +
			"using `to_dense()`\" (assoc_sparse in both corpora)",
		Source: "2.6.0: torch/_higher_order_ops/associative_scan.py associative_scan (torch.compile first); 2.14.1: associative_scan.py " +
			"_validate_input"},
	{ID: DiffScanZeroLength26, Torch: TorchVersions{Until: "2.14"},
		What: "scan() refuses an xs leaf whose scan dimension is 0: \"All xs leaves must have a scan dimension > 0 but got " +
			"FakeTensor(..., size=(0, 4))\"; 2.14 accepts it (scan_zero_len traces) and returns the inits",
		Source: "2.6.0: torch/_higher_order_ops/scan.py scan; 2.14.1: scan.py _validate_input (no such check)"},
	{ID: DiffBatchNormEvalStats113, Torch: TorchVersions{Until: "2.0"},
		What: "native_batch_norm with training=False returns save_mean and save_invstd of shape [0] on CPU, but make_fx's " +
			"fake tensors record them with C elements; a partition that saves them keeps 0 bytes, not 4·C (2.x's meta " +
			"function returns [0], as its kernel does)",
		Source: "1.13.1: aten/src/ATen/native/Normalization.cpp batch_norm_cpu (at::empty({0}) when !train) against " +
			"torch/_refs/__init__.py / _meta_registrations.py native_batch_norm (shape [C] either way)"},
	{ID: DiffMinCutRecompute113, Torch: TorchVersions{Until: "2.0"},
		What: "min-cut rematerialization recomputes only functorch's short list of pointwise, reduction and view ops (maximum, " +
			"clone, full, zeros and index are saved when the backward needs them); 2.x recomputes a longer list and every op " +
			"tagged pointwise, so it saves the input of a maximum instead of the maximum and the masks of its backward",
		Source: "1.13.1: functorch/_src/partitioners.py min_cut_rematerialization_partition (recomputable_ops); 2.14.1: " +
			"torch/_functorch/partitioners.py get_default_op_list (default_recomputable_ops, pointwise_ops())"},
}

// rowTorch returns the releases of version table row id (the HOP table's
// rules that differ by release take their bounds from the row).
func rowTorch(id string) TorchVersions {
	for _, d := range torchDifferences {
		if d.ID == id {
			return d.Torch
		}
	}
	panic("opschema: no version table row " + id)
}

// TorchDifferences returns the version table.
func TorchDifferences() []TorchDifference {
	out := make([]TorchDifference, len(torchDifferences))
	copy(out, torchDifferences)
	return out
}

// TorchDiffers reports whether row id of the version table applies to
// torch release version ("" is the newest release).
func TorchDiffers(id, version string) bool {
	for _, d := range torchDifferences {
		if d.ID == id {
			return d.Torch.Holds(version)
		}
	}
	return false
}

// HOPMessage26 returns torch 2.6's wording of an alias (alias true) or
// mutation refusal for the subgraph PyTorch names name, and false where
// hopctl has not verified 2.6's wording.
func HOPMessage26(name string, alias bool) (string, bool) {
	switch {
	case name == "cond_true" || name == "cond_false":
		if alias {
			return "One of torch.cond branch might be aliasing the input! If you are returning a view of the input, please make sure to clone it.", true
		}
		return "One of torch.cond branch might be modifying the input! Consider cloning the input before modifying it.", true
	case name == "body_fn" || name == "cond_fn":
		if alias {
			return "torch.while_loop's " + name + " might be aliasing the input!", true
		}
		return "torch.while_loop's " + name + " might be modifying the input!", true
	case name == "scan":
		if alias {
			return "Combine_fn might be aliasing the input!", true
		}
		return "Combine_fn might be modifying the input!", true
	case name == "map":
		if alias {
			return "torch.map is aliasing the input!", true
		}
		return "torch.map is mutating the input!", true
	}
	return "", false
}

// NormalizeTorchVersion returns "major.minor" of a torch version string
// ("2.6.0+debian" → "2.6"), or "" when it has none.
func NormalizeTorchVersion(v string) string {
	v = strings.TrimSpace(v)
	if x, ok := parseVersion(v); ok {
		return strconv.Itoa(x[0]) + "." + strconv.Itoa(x[1])
	}
	return ""
}
