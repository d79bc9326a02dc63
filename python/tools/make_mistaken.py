"""Files a torch user is likely to pass to hopctl by mistake (testdata/mistaken).

hopctl reads torch.export programs and its own graph files; these are the
other files a PyTorch project has lying around, written by real torch so
that the loader's recognition (pkg/ir/mistaken.go) is checked against what
torch actually writes, not against a guess of it (internal/cli
TestMistakenInputs):

    model.py          the Python source of a model
    state_dict.pt     torch.save(model.state_dict()): a zip with data.pkl
    module.pt         torch.save(model): the pickled module, same zip layout
    legacy.pt         torch.save(..., _use_new_zipfile_serialization=False):
                      a bare pickle stream (torch < 1.6's format)
    scripted.pt       torch.jit.save(torch.jit.script(model)): a zip with
                      code/ and constants.pkl
    model.onnx        torch.onnx.export(model, args, ...): an ONNX ModelProto

Run with torch 1.13, whose torch.onnx serializes the ModelProto itself (no
onnx package needed), and with torch 2.14, whose torch.onnx.export needs
onnxscript: without it model.onnx is left out, as it is of the 2.14 files in
the repository:

    /usr/bin/python3 python/tools/make_mistaken.py testdata/mistaken
    scripts/torch.sh 2.14 -- python3 python/tools/make_mistaken.py testdata/mistaken/torch2.14
"""

import os
import sys

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        return self.fc(x).relu()


MODEL_PY = '''import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        return self.fc(x).relu()
'''


def main(out):
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    model = Model().eval()
    args = (torch.randn(1, 3),)
    with open(os.path.join(out, "model.py"), "w") as f:
        f.write(MODEL_PY)
    torch.save(model.state_dict(), os.path.join(out, "state_dict.pt"))
    torch.save(model, os.path.join(out, "module.pt"))
    torch.save(model.state_dict(), os.path.join(out, "legacy.pt"), _use_new_zipfile_serialization=False)
    torch.jit.save(torch.jit.script(model), os.path.join(out, "scripted.pt"))
    try:
        torch.onnx.export(model, args, os.path.join(out, "model.onnx"), input_names=["x"], output_names=["y"])
    except ModuleNotFoundError as e:  # torch >= 2.9 exports through onnxscript
        print("model.onnx left out:", e)
    print("wrote", sorted(os.listdir(out)), "with torch", torch.__version__)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "testdata/mistaken")
