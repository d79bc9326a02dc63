{
  "format_version": {
    "major": 1
  },
  "producer": "hopctl_torch 0.1.0",
  "torch_version": "1.13.0a0",
  "graph": {
    "nodes": [
      {
        "name": "p_fc1_weight",
        "op": "PLACEHOLDER",
        "target": "p_fc1_weight",
        "val": {
          "tensor": {
            "shape": [
              {
                "value": "32"
              },
              {
                "value": "16"
              }
            ],
            "stride": [
              {
                "value": "16"
              },
              {
                "value": "1"
              }
            ],
            "storage_offset": {
              "value": "0"
            },
            "dtype": "float32",
            "device": "cpu",
            "requires_grad": true,
            "memory_format": "contiguous_format",
            "storage_id": "0",
            "layout": "strided"
          }
        }
      },
      {
        "name": "p_fc1_bias",
        "op": "PLACEHOLDER",
        "target": "p_fc1_bias",
        "val": {
          "tensor": {
            "shape": [
              {
                "value": "32"
              }
            ],
            "stride": [
              {
                "value": "1"
              }
            ],
            "storage_offset": {
              "value": "0"
            },
            "dtype": "float32",
            "device": "cpu",
            "requires_grad": true,
            "memory_format": "contiguous_format",
            "storage_id": "1",
            "layout": "strided"
          }
        }
      },
      {
        "name": "p_norm_weight",
        "op": "PLACEHOLDER",
        "target": "p_norm_weight",
        "val": {
          "tensor": {
            "shape": [
              {
                "value": "32"
              }
            ],
            "stride": [
              {
                "value": "1"
              }
            ],
            "storage_offset": {
              "value": "0"
            },
            "dtype": "float32",
            "device": "cpu",
            "requires_grad": true,
            "memory_format": "contiguous_format",
            "storage_id": "2",
            "layout": "strided"
          }
        }
      },
      {
        "name": "p_norm_bias",
        "op": "PLACEHOLDER",
        "target": "p_norm_bias",
        "val": {
          "tensor": {
            "shape": [
              {
                "value": "32"
              }
            ],
            "stride": [
              {
                "value": "1"
              }
            ],
            "storage_offset": {
              "value": "0"
            },
            "dtype": "float32",
            "device": "cpu",
            "requires_grad": true,
            "memory_format": "contiguous_format",
            "storage_id": "3",
            "layout": "strided"
          }
        }
      },
      {
        "name": "p_fc2_weight",
        "op": "PLACEHOLDER",
        "target": "p_fc2_weight",
        "val": {
          "tensor": {
            "shape": [
              {
                "value": "8"
              },
              {
                "value": "32"
              }
            ],
            "stride": [
              {
                "value": "32"
              },
              {
                "value": "1"
              }
            ],
            "storage_offset": {
              "value": "0"
            },
            "dtype": "float32",
            "device": "cpu",
            "requires_grad": true,
            "memory_format": "contiguous_format",
            "storage_id": "4",
            "layout": "strided"
          }
        }
      },
      {
        "name": "p_fc2_bias",
        "op": "PLACEHOLDER",
        "target": "p_fc2_bias",
        "val": {
          "tensor": {
            "shape": [
              {
                "value": "8"
              }
            ],
            "stride": [
              {
                "value": "1"
              }
            ],
            "storage_offset": {
              "value": "0"
            },
            "dtype": "float32",
            "device": "cpu",
            "requires_grad": true,
            "memory_format": "contiguous_format",
            "storage_id": "5",
            "layout": "strided"
          }
        }
      },
      {
        "name": "x",
        "op": "PLACEHOLDER",
        "target": "x",
        "val": {
          "tensor": {
            "shape": [
              {
                "value": "4"
              },
              {
                "value": "16"
              }
            ],
            "stride": [
              {
                "value": "16"
              },
              {
                "value": "1"
              }
            ],
            "storage_offset": {
              "value": "0"
            },
            "dtype": "float32",
            "device": "cpu",
            "requires_grad": true,
            "memory_format": "contiguous_format",
            "storage_id": "6",
            "layout": "strided"
          }
        }
      },
      {
        "name": "t",
        "op": "CALL_FUNCTION",
        "target": "aten.t.default",
        "args": [
          {
            "node": "p_fc1_weight"
          }
        ],
        "val": {
          "tensor": {
            "shape": [
              {
                "value": "16"
              },
              {
                "value": "32"
              }
            ],
            "stride": [
              {
                "value": "1"
              },
              {
                "value": "16"
              }
            ],
            "storage_offset": {
              "value": "0"
            },
            "dtype": "float32",
            "device": "cpu",
            "requires_grad": true,
            "layout": "strided"
          }
        },
        "meta": {
          "stack_trace": "  File \"python/tools/corpus.py\", line 64, in forward\n    return self.fc2(self.act(self.norm(self.fc1(x))))\n  File \"/usr/lib/python3/dist-packages/torch/nn/modules/linear.py\", line 114, in forward\n    return F.linear(input, self.weight, self.bias)\n",
          "nn_module_stack": [
            {
              "key": "L__self__",
              "type": "corpus.MLP"
            },
            {
              "key": "L__self___fc1",
              "path": "fc1",
              "type": "torch.nn.modules.linear.Linear"
            }
          ]
        }
      },
      {
        "name": "addmm",
        "op": "CALL_FUNCTION",
        "target": "aten.addmm.default",
        "args": [
          {
            "node": "p_fc1_bias"
          },
          {
            "node": "x"
          },
          {
            "node": "t"
          }
        ],
        "val": {
          "tensor": {
            "shape": [
              {
                "value": "4"
              },
              {
                "value": "32"
              }
            ],
            "stride": [
              {
                "value": "32"
              },
              {
                "value": "1"
              }
            ],
            "storage_offset": {
              "value": "0"
            },
            "dtype": "float32",
            "device": "cpu",
            "requires_grad": true,
            "memory_format": "contiguous_format",
            "layout": "strided"
          }
        },
        "meta": {
          "stack_trace": "  File \"python/tools/corpus.py\", line 64, in forward\n    return self.fc2(self.act(self.norm(self.fc1(x))))\n  File \"/usr/lib/python3/dist-packages/torch/nn/modules/linear.py\", line 114, in forward\n    return F.linear(input, self.weight, self.bias)\n",
          "nn_module_stack": [
            {
              "key": "L__self__",
              "type": "corpus.MLP"
            },
            {
              "key": "L__self___fc1",
              "path": "fc1",
              "type": "torch.nn.modules.linear.Linear"
            }
          ]
        }
      },
      {
        "name": "native_layer_norm",
        "op": "CALL_FUNCTION",
        "target": "aten.native_layer_norm.default",
        "args": [
          {
            "node": "addmm"
          },
          {
            "list": {
              "items": [
                {
                  "int": "32"
                }
              ]
            }
          },
          {
            "node": "p_norm_weight"
          },
          {
            "node": "p_norm_bias"
          },
          {
            "float": 0.00001
          }
        ],
        "meta": {
          "stack_trace": "  File \"python/tools/corpus.py\", line 64, in forward\n    return self.fc2(self.act(self.norm(self.fc1(x))))\n  File \"/usr/lib/python3/dist-packages/torch/nn/modules/normalization.py\", line 190, in forward\n    return F.layer_norm(\n  File \"/usr/lib/python3/dist-packages/torch/nn/functional.py\", line 2515, in layer_norm\n    return torch.layer_norm(input, normalized_shape, weight, bias, eps, torch.backends.cudnn.enabled)\n",
          "nn_module_stack": [
            {
              "key": "L__self__",
              "type": "corpus.MLP"
            },
            {
              "key": "L__self___norm",
              "path": "norm",
              "type": "torch.nn.modules.normalization.LayerNorm"
            }
          ]
        }
      },
      {
        "name": "getitem",
        "op": "CALL_FUNCTION",
        "target": "_operator.getitem",
        "args": [
          {
            "node": "native_layer_norm"
          },
          {
            "int": "0"
          }
        ],
        "val": {
          "tensor": {
            "shape": [
              {
                "value": "4"
              },
              {
                "value": "32"
              }
            ],
            "stride": [
              {
                "value": "32"
              },
              {
                "value": "1"
              }
            ],
            "storage_offset": {
              "value": "0"
            },
            "dtype": "float32",
            "device": "cpu",
            "requires_grad": true,
            "memory_format": "contiguous_format",
            "layout": "strided"
          }
        },
        "meta": {
          "stack_trace": "  File \"python/tools/corpus.py\", line 64, in forward\n    return self.fc2(self.act(self.norm(self.fc1(x))))\n  File \"/usr/lib/python3/dist-packages/torch/nn/modules/normalization.py\", line 190, in forward\n    return F.layer_norm(\n  File \"/usr/lib/python3/dist-packages/torch/nn/functional.py\", line 2515, in layer_norm\n    return torch.layer_norm(input, normalized_shape, weight, bias, eps, torch.backends.cudnn.enabled)\n",
          "nn_module_stack": [
            {
              "key": "L__self__",
              "type": "corpus.MLP"
            },
            {
              "key": "L__self___norm",
              "path": "norm",
              "type": "torch.nn.modules.normalization.LayerNorm"
            }
          ]
        }
      },
      {
        "name": "getitem_1",
        "op": "CALL_FUNCTION",
        "target": "_operator.getitem",
        "args": [
          {
            "node": "native_layer_norm"
          },
          {
            "int": "1"
          }
        ],
        "val": {
          "tensor": {
            "shape": [
              {
                "value": "4"
              },
              {
                "value": "1"
              }
            ],
            "stride": [
              {
                "value": "1"
              },
              {
                "value": "1"
              }
            ],
            "storage_offset": {
              "value": "0"
            },
            "dtype": "float32",
            "device": "cpu",
            "memory_format": "contiguous_format",
            "layout": "strided"
          }
        },
        "meta": {
          "stack_trace": "  File \"python/tools/corpus.py\", line 64, in forward\n    return self.fc2(self.act(self.norm(self.fc1(x))))\n  File \"/usr/lib/python3/dist-packages/torch/nn/modules/normalization.py\", line 190, in forward\n    return F.layer_norm(\n  File \"/usr/lib/python3/dist-packages/torch/nn/functional.py\", line 2515, in layer_norm\n    return torch.layer_norm(input, normalized_shape, weight, bias, eps, torch.backends.cudnn.enabled)\n",
          "nn_module_stack": [
            {
              "key": "L__self__",
              "type": "corpus.MLP"
            },
            {
              "key": "L__self___norm",
              "path": "norm",
              "type": "torch.nn.modules.normalization.LayerNorm"
            }
          ]
        }
      },
      {
        "name": "getitem_2",
        "op": "CALL_FUNCTION",
        "target": "_operator.getitem",
        "args": [
          {
            "node": "native_layer_norm"
          },
          {
            "int": "2"
          }
        ],
        "val": {
          "tensor": {
            "shape": [
              {
                "value": "4"
              },
              {
                "value": "1"
              }
            ],
            "stride": [
              {
                "value": "1"
              },
              {
                "value": "1"
              }
            ],
            "storage_offset": {
              "value": "0"
            },
            "dtype": "float32",
            "device": "cpu",
            "memory_format": "contiguous_format",
            "layout": "strided"
          }
        },
        "meta": {
          "stack_trace": "  File \"python/tools/corpus.py\", line 64, in forward\n    return self.fc2(self.act(self.norm(self.fc1(x))))\n  File \"/usr/lib/python3/dist-packages/torch/nn/modules/normalization.py\", line 190, in forward\n    return F.layer_norm(\n  File \"/usr/lib/python3/dist-packages/torch/nn/functional.py\", line 2515, in layer_norm\n    return torch.layer_norm(input, normalized_shape, weight, bias, eps, torch.backends.cudnn.enabled)\n",
          "nn_module_stack": [
            {
              "key": "L__self__",
              "type": "corpus.MLP"
            },
            {
              "key": "L__self___norm",
              "path": "norm",
              "type": "torch.nn.modules.normalization.LayerNorm"
            }
          ]
        }
      },
      {
        "name": "gelu",
        "op": "CALL_FUNCTION",
        "target": "aten.gelu.default",
        "args": [
          {
            "node": "getitem"
          }
        ],
        "val": {
          "tensor": {
            "shape": [
              {
                "value": "4"
              },
              {
                "value": "32"
              }
            ],
            "stride": [
              {
                "value": "32"
              },
              {
                "value": "1"
              }
            ],
            "storage_offset": {
              "value": "0"
            },
            "dtype": "float32",
            "device": "cpu",
            "requires_grad": true,
            "memory_format": "contiguous_format",
            "layout": "strided"
          }
        },
        "meta": {
          "stack_trace": "  File \"python/tools/corpus.py\", line 64, in forward\n    return self.fc2(self.act(self.norm(self.fc1(x))))\n  File \"/usr/lib/python3/dist-packages/torch/nn/modules/activation.py\", line 684, in forward\n    return F.gelu(input, approximate=self.approximate)\n",
          "nn_module_stack": [
            {
              "key": "L__self__",
              "type": "corpus.MLP"
            },
            {
              "key": "L__self___act",
              "path": "act",
              "type": "torch.nn.modules.activation.GELU"
            }
          ]
        }
      },
      {
        "name": "t_1",
        "op": "CALL_FUNCTION",
        "target": "aten.t.default",
        "args": [
          {
            "node": "p_fc2_weight"
          }
        ],
        "val": {
          "tensor": {
            "shape": [
              {
                "value": "32"
              },
              {
                "value": "8"
              }
            ],
            "stride": [
              {
                "value": "1"
              },
              {
                "value": "32"
              }
            ],
            "storage_offset": {
              "value": "0"
            },
            "dtype": "float32",
            "device": "cpu",
            "requires_grad": true,
            "layout": "strided"
          }
        },
        "meta": {
          "stack_trace": "  File \"python/tools/corpus.py\", line 64, in forward\n    return self.fc2(self.act(self.norm(self.fc1(x))))\n  File \"/usr/lib/python3/dist-packages/torch/nn/modules/linear.py\", line 114, in forward\n    return F.linear(input, self.weight, self.bias)\n",
          "nn_module_stack": [
            {
              "key": "L__self__",
              "type": "corpus.MLP"
            },
            {
              "key": "L__self___fc2",
              "path": "fc2",
              "type": "torch.nn.modules.linear.Linear"
            }
          ]
        }
      },
      {
        "name": "addmm_1",
        "op": "CALL_FUNCTION",
        "target": "aten.addmm.default",
        "args": [
          {
            "node": "p_fc2_bias"
          },
          {
            "node": "gelu"
          },
          {
            "node": "t_1"
          }
        ],
        "val": {
          "tensor": {
            "shape": [
              {
                "value": "4"
              },
              {
                "value": "8"
              }
            ],
            "stride": [
              {
                "value": "8"
              },
              {
                "value": "1"
              }
            ],
            "storage_offset": {
              "value": "0"
            },
            "dtype": "float32",
            "device": "cpu",
            "requires_grad": true,
            "memory_format": "contiguous_format",
            "layout": "strided"
          }
        },
        "meta": {
          "stack_trace": "  File \"python/tools/corpus.py\", line 64, in forward\n    return self.fc2(self.act(self.norm(self.fc1(x))))\n  File \"/usr/lib/python3/dist-packages/torch/nn/modules/linear.py\", line 114, in forward\n    return F.linear(input, self.weight, self.bias)\n",
          "nn_module_stack": [
            {
              "key": "L__self__",
              "type": "corpus.MLP"
            },
            {
              "key": "L__self___fc2",
              "path": "fc2",
              "type": "torch.nn.modules.linear.Linear"
            }
          ]
        }
      },
      {
        "name": "output",
        "op": "OUTPUT",
        "target": "output",
        "args": [
          {
            "node": "addmm_1"
          }
        ]
      }
    ]
  },
  "schemas": [
    {
      "name": "aten::addmm",
      "schema": "aten::addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor"
    },
    {
      "name": "aten::gelu",
      "schema": "aten::gelu(Tensor self, *, str approximate=\"none\") -> Tensor"
    },
    {
      "name": "aten::native_layer_norm",
      "schema": "aten::native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) -> (Tensor, Tensor, Tensor)"
    },
    {
      "name": "aten::t",
      "schema": "aten::t(Tensor(a) self) -> Tensor(a)"
    }
  ]
}
