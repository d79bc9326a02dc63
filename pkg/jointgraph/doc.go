// Package jointgraph builds the joint forward+backward graph of a forward FX
// graph, as AOTAutograd's create_joint traces it. Package partition splits
// the joint into a forward and a backward graph.
//
// The pipeline is a list of passes over the IR, each followed by ir.Verify
// in tests:
//
//  1. Functionalize (functionalize.go): in-place ops become their
//     functional variants, writes through views become scatter ops into the
//     view's base, later uses of views of a mutated base are regenerated
//     from the new base, and mutated graph inputs are written back with
//     copy_ at the end (copy-back).
//  2. requires_grad propagation from the inputs (rg.go), and the output
//     masks (prepare_fw_with_masks / prepare_fw_with_masks_all_requires_grad
//     / explicit; options.go).
//  3. The reverse-mode walk (joint.go): forward nodes in reverse order, each
//     one's derivative rule emitting the backward nodes, with gradients
//     accumulated by add and reduced to the input's size (sum_to_size) where
//     the forward broadcast; then dead code elimination (dce.go) and the
//     module around the graph (assemble.go, nested.go).
//
// The files, by role:
//
//   - The builder: build.go (V, the graph builder), tensor.go and ops.go
//     (metadata of emitted nodes, interned per builder; the ATen helpers the
//     rules compose), names.go (torch.fx's node naming), opinfo.go (what is
//     looked up once per call target), precheck.go, errors.go, options.go.
//   - Derivative rules: rule.go (Rule, Grad, Ctx, the table) and one file
//     per op family — rules_pointwise.go, rules_reduction.go,
//     rules_linalg.go, rules_view.go, rules_nn.go, rules_index.go,
//     rules_composite.go — concatenated explicitly by Families, with
//     nondiff.go's non-differentiable list and coverage.go's report.
//   - HOP backwards: hop.go (the table, cond, map, scan), hop_while.go,
//     hop_invoke.go, hop_assocscan.go, hop_bodies.go, nested.go.
//
// The rules and the HOP backwards stay in this package rather than in
// packages of their own: a formula is written in the builder's vocabulary
// (c.mul, c.sumToSize, x.meta, ...), some fifty unexported helpers of the
// builder and of V, and a HOP backward builds the joints of its subgraphs
// with the jointBuilder that calls it. A package boundary would export that
// whole vocabulary for one consumer, and the HOP backwards would need an
// interface over jointBuilder to break the import cycle with the walk that
// dispatches to them; the file prefixes (rules_, hop_) keep the families
// apart instead. The partitioners needed only the Joint and three small
// functions (Joint.ModuleFor, TensorBytes, ElementSize), so they are
// package partition.
//
// Backward graphs use only ATen overloads whose schemas exist in torch 1.13,
// so hopctl_torch.load runs every graph this package writes.
package jointgraph
