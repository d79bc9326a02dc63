package alias

import "testing"

func TestInnermostFrame(t *testing.T) {
	trace := `  File "/src/model.py", line 48, in forward
    return torch.cond(x.sum() > 0, true_fn, false_fn, (x,))
  File "/usr/lib/python3/dist-packages/torch/_higher_order_ops/cond.py", line 144, in cond
    return cond_op(pred, true_fn, false_fn, operands)
  File "/src/model.py", line 43, in true_fn
    return x.view(-1)
`
	if src, code := innermostFrame(trace); src != "/src/model.py:43" || code != "return x.view(-1)" {
		t.Errorf("innermostFrame = %q, %q", src, code)
	}
	if src, code := innermostFrame(`File "a.py", line 3, in f`); src != "a.py:3" || code != "" {
		t.Errorf("no code line: %q, %q", src, code)
	}
	if src, code := innermostFrame("no frames here"); src != "" || code != "" {
		t.Errorf("no frame: %q, %q", src, code)
	}
}

func TestOutOfPlace(t *testing.T) {
	for node, want := range map[string]string{"add_": "add", "add__1": "add", "index_put_": "index_put", "copy__12": "copy",
		"add": "", "add_1": "", "view": "", "_": "", "sin_x": ""} {
		if got := outOfPlace(node); got != want {
			t.Errorf("outOfPlace(%q) = %q, want %q", node, got, want)
		}
	}
}
