// Package jointgraph builds the joint forward+backward graph of a forward FX
// graph, as AOTAutograd's create_joint traces it, and splits it into a
// forward and a backward graph.
//
// The pipeline is a list of passes over the IR, each followed by ir.Verify
// in tests:
//
//  1. Functionalize: in-place ops become their functional variants, writes
//     through views become scatter ops into the view's base, later uses of
//     views of a mutated base are regenerated from the new base, and mutated
//     graph inputs are written back with copy_ at the end (copy-back).
//  2. requires_grad propagation from the inputs, and the output masks
//     (prepare_fw_with_masks / prepare_fw_with_masks_all_requires_grad /
//     explicit).
//  3. The reverse-mode walk: forward nodes in reverse order, each one's
//     derivative rule (a Rule, looked up by overload in a table assembled
//     from one file per op family: rules_pointwise.go, rules_reduction.go,
//     rules_linalg.go, rules_view.go, rules_nn.go, rules_index.go) emitting
//     the backward nodes, with gradients accumulated by add and reduced to
//     the input's size (sum_to_size) where the forward broadcast.
//  4. Partition (default or min-cut), as AOTAutograd's default_partition and
//     min_cut_rematerialization_partition do.
//
// Backward graphs use only ATen overloads whose schemas exist in torch 1.13,
// so hopctl_torch.load runs every graph this package writes.
package jointgraph
