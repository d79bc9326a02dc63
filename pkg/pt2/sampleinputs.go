package pt2

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"path"

	"github.com/nlpodyssey/gopickle/pickle"
	"github.com/nlpodyssey/gopickle/types"

	"github.com/hopctl/hopctl/pkg/ir"
)

// The example inputs an archive saves (ExportedProgram.example_inputs:
// torch 2.6's serialized_example_inputs.pt, torch 2.14's
// data/sample_inputs/<model>.pt; torch/_export/serde/serialize.py) are a
// torch.save zip of (args, kwargs). The one fact hopctl reads from them is
// which user inputs were one storage — f(x[0], x[1]), f(t, t) — which the
// program JSON does not record and which decides AOTAutograd's answer for
// a write through one of them (ViewAndMutationMeta's mutates_data of
// both). torch.save pickles each tensor as
// torch._utils._rebuild_tensor_v2(persistent_id(('storage', <Storage
// class>, key, location, numel)), offset, size, stride, ...): tensors of
// one storage share its key (torch/serialization.py persistent_id). The
// storages' bytes are never read.

// sampleLeaf is one leaf of the example inputs: a tensor's storage key
// ("" for a leaf that is not a tensor) and its offset in that storage.
type sampleLeaf struct {
	storage string
	offset  int64
}

// sampleStorageKeys returns the leaves of the pickled (args, kwargs) in
// pytree order (torch.export's flat user inputs).
func sampleStorageKeys(data []byte) (keys []sampleLeaf, err error) {
	defer func() {
		if r := recover(); r != nil { // a malformed pickle: no answer, not a crash
			keys, err = nil, fmt.Errorf("unreadable example inputs: %v", r)
		}
	}()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, err
	}
	var pkl *zip.File
	for _, f := range zr.File {
		if path.Base(f.Name) == "data.pkl" && pkl == nil {
			pkl = f
		}
	}
	if pkl == nil {
		return nil, errors.New("example inputs without data.pkl")
	}
	raw, err := readEntry(pkl, ir.MaxInputSize())
	if err != nil {
		return nil, err
	}
	u := pickle.NewUnpickler(bytes.NewReader(raw))
	u.FindClass = func(module, name string) (any, error) {
		switch module + "." + name {
		case "torch._utils._rebuild_tensor_v2", "torch._utils._rebuild_tensor":
			return rebuildTensor{}, nil
		case "torch._utils._rebuild_parameter":
			return rebuildParameter{}, nil
		}
		return types.NewGenericClass(module, name), nil
	}
	u.PersistentLoad = func(id any) (any, error) {
		t, ok := id.(*types.Tuple)
		if !ok || t.Len() < 3 {
			return nil, fmt.Errorf("persistent id %v is not a storage", id)
		}
		if kind, _ := t.Get(0).(string); kind != "storage" {
			return nil, fmt.Errorf("persistent id of kind %v", t.Get(0))
		}
		key, ok := t.Get(2).(string)
		if !ok {
			return nil, errors.New("storage without a key")
		}
		return storageRef(key), nil
	}
	v, err := u.Load()
	if err != nil {
		return nil, err
	}
	top, ok := v.(*types.Tuple)
	if !ok || top.Len() != 2 {
		return nil, errors.New("example inputs are not (args, kwargs)")
	}
	var walk func(any) error
	walk = func(x any) error {
		switch x := x.(type) {
		case *sampleTensor:
			keys = append(keys, sampleLeaf{string(x.storage), x.offset})
		case *types.Tuple:
			for _, e := range *x {
				if err := walk(e); err != nil {
					return err
				}
			}
		case *types.List:
			for _, e := range *x {
				if err := walk(e); err != nil {
					return err
				}
			}
		case *types.Dict:
			for _, e := range *x {
				if err := walk(e.Value); err != nil {
					return err
				}
			}
		case nil:
			// pytree: None is a node without leaves.
		case bool, int, float64, string:
			keys = append(keys, sampleLeaf{})
		default:
			return fmt.Errorf("example input of type %T", x)
		}
		return nil
	}
	if err := walk(top); err != nil {
		return nil, err
	}
	return keys, nil
}

type storageRef string

type sampleTensor struct {
	storage storageRef
	offset  int64
}

type rebuildTensor struct{}

func (rebuildTensor) Call(args ...any) (any, error) {
	if len(args) == 0 {
		return nil, errors.New("_rebuild_tensor without a storage")
	}
	s, ok := args[0].(storageRef)
	if !ok {
		return nil, fmt.Errorf("_rebuild_tensor of %T", args[0])
	}
	t := &sampleTensor{storage: s}
	if len(args) > 1 {
		if off, ok := args[1].(int); ok {
			t.offset = int64(off)
		}
	}
	return t, nil
}

// rebuildParameter is torch._utils._rebuild_parameter(data, requires_grad,
// backward_hooks): the parameter is its tensor.
type rebuildParameter struct{}

func (rebuildParameter) Call(args ...any) (any, error) {
	if len(args) == 0 {
		return nil, errors.New("_rebuild_parameter without data")
	}
	return args[0], nil
}

// recordSampleSharing gives the user inputs of m's root graph that are
// tensors the storage ids of the example inputs they were exported with
// (equal ids: one storage), as the bridge records them for make_fx
// graphs, after the ids the file records. Inputs that share a storage get
// their offsets in it too: the program JSON records every input as a
// fresh tensor at offset 0, so x[0] and x[1] would look like one tensor
// passed twice (AOTAutograd tells them apart: a write to one is not a
// write to the other). Without a usable record — no example inputs, an
// unreadable pickle, leaves that do not match the user inputs — nothing
// is recorded and the sharing stays unknown.
func recordSampleSharing(m *ir.Module, data []byte) {
	if m.Signature == nil || len(m.Graphs) == 0 {
		return
	}
	leaves, err := sampleStorageKeys(data)
	if err != nil {
		return
	}
	var userNames []string
	for _, in := range m.Signature.Inputs {
		if in.Kind == ir.InputUserInput {
			userNames = append(userNames, in.Name)
		}
	}
	if len(leaves) != len(userNames) {
		return
	}
	root := m.Root()
	next := int64(0)
	for _, id := range root.Placeholders() {
		if v := root.Nodes[id].Val; v != nil && v.Kind == ir.ValTensor && v.Tensor != nil && v.Tensor.HasStorageID {
			next = max(next, v.Tensor.StorageID+1)
		}
	}
	count := map[string]int{}
	for _, l := range leaves {
		if l.storage != "" {
			count[l.storage]++
		}
	}
	ids := map[string]int64{}
	for i, name := range userNames {
		l := leaves[i]
		if l.storage == "" {
			continue
		}
		id, ok := root.Lookup(name)
		if !ok {
			continue
		}
		v := root.Nodes[id].Val
		if v == nil || v.Kind != ir.ValTensor || v.Tensor == nil {
			continue
		}
		sid, seen := ids[l.storage]
		if !seen {
			sid = next
			next++
			ids[l.storage] = sid
		}
		// A copy: the decoder may share one value between nodes.
		nv, nt := *v, *v.Tensor
		nt.StorageID, nt.HasStorageID = sid, true
		if count[l.storage] > 1 {
			nt.StorageOffset = ir.Dim{Val: l.offset}
		}
		nv.Tensor = &nt
		root.Nodes[id].Val = &nv
	}
}
