"""hopctl_torch.analyze's Report: the JSON document as a dict, printed as
hopctl's text report, rendered as HTML in Jupyter with the file's names
escaped."""

import os
import shutil
import unittest

import hopctl_torch

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


@unittest.skipUnless(os.environ.get("HOPCTL") or shutil.which("hopctl"), "no hopctl binary (set HOPCTL)")
class ReportTest(unittest.TestCase):
    def test_prints_and_renders(self):
        r = hopctl_torch.analyze(os.path.join(ROOT, "testdata", "hops", "cond_mutates_view.pbtxt"))
        self.assertIsInstance(r, dict)
        self.assertEqual(r["schema_version"], 1)
        text = str(r)
        self.assertIn("mutated_inputs: [1 (x_1)]", text)
        self.assertIn("cond_true might be modifying the input! [hop-input-mutation]", text)
        # The rule's fix under the finding, as hopctl's text output prints it.
        self.assertIn("[hop-input-mutation]\n    help: compute out of place ('y = x + 1')", text)
        html = r._repr_html_()
        self.assertIn("<td>1 (x_1): node cond → true_graph_0 → ", html)
        self.assertIn("&lt;root&gt;", html)
        self.assertIn("[hop-input-mutation]", html)

    def test_signature_mutations(self):
        # After run_decompositions() the buffer writes live only in the
        # export signature: the Report names them with it as provenance;
        # the training-IR archive of the same program writes them in nodes.
        pt2 = os.path.join(ROOT, "testdata", "pt2", "2.14")
        aten = hopctl_torch.analyze(os.path.join(pt2, "buffer_update.aten.pt2"))
        self.assertEqual([(m[3], m[4]) for m in aten.mutations()], [
            ("b_running", "declared by the graph signature, output 0 (BUFFER_MUTATION)"),
            ("b_steps", "declared by the graph signature, output 1 (BUFFER_MUTATION)")])
        self.assertIn("2 (b_running): declared by the graph signature, output 0 (BUFFER_MUTATION)", str(aten))
        self.assertIn("declared by the graph signature", aten._repr_html_())
        train = hopctl_torch.analyze(os.path.join(pt2, "buffer_update.train.pt2"))
        self.assertEqual([(m[3], m[4]) for m in train.mutations()], [("b_running", "node add_"), ("b_steps", "node add__1")])

    def test_view_meta(self):
        # AOTAutograd's kinds, as analyze --format json carries them.
        path = os.path.join(ROOT, "testdata", "models", "inplace_views.pb")
        vm = hopctl_torch.analyze(path).view_meta()[path]
        self.assertEqual(vm["inputs"][2]["mutation_type"], "MUTATED_OUT_GRAPH")
        self.assertEqual([o["output_type"] for o in vm["outputs"]],
                         ["unsafe_view_alias", "alias_of_input", "alias_of_intermediate_save_as_output", "alias_of_intermediate"])
        self.assertEqual(vm["outputs"][1]["base_idx"], 1)

    def test_clean(self):
        r = hopctl_torch.analyze(os.path.join(ROOT, "testdata", "hops", "cond.pbtxt"))
        self.assertIn("no findings", str(r))
        self.assertIn("no findings", r._repr_html_())

    def test_names_escaped(self):
        # A name from the file must not become markup in the notebook.
        r = hopctl_torch.Report({"files": [{"path": "<script>x</script>.pb", "graphs": [
            {"name": "g<b>", "inputs": ["<i>"], "mutated_inputs": [0], "num_outputs": 1, "findings": []}]}]})
        html = r._repr_html_()
        self.assertNotIn("<script>", html)
        self.assertNotIn("<b>", html)
        self.assertIn("&lt;script&gt;", html)


if __name__ == "__main__":
    unittest.main()
