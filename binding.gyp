{
  "targets": [
    {
      "target_name": "jaxon_native",
      "sources": [
        "cuda/addon.c",
        "cuda/cpu_kernels.c",
        "cuda/cuda_alloc.c",
        "cuda/cuda_compile.c",
        "cuda/cuda_completions.c",
        "cuda/cuda_driver.c",
        "cuda/cuda_graph.c",
        "cuda/cuda_memory.c",
        "cuda/cuda_napi.c",
        "cuda/cuda_program.c",
        "cuda/cuda_runtime.c",
        "cuda/cuda_tensor_map.c",
        "cuda/cuda_test_hooks.c"
      ],
      "cflags": [
        "-O2",
        "-std=c11",
        "-Wall",
        "-Wextra",
        "-Wno-unused-parameter"
      ],
      "libraries": [
        "-ldl",
        "-lpthread"
      ],
      "defines": [
        "NAPI_VERSION=8"
      ]
    },
    {
      "target_name": "jaxon_cuda_emulator",
      "type": "loadable_module",
      "product_prefix": "",
      "product_extension": "so",
      "sources": [
        "cuda/emulator/common.cc",
        "cuda/emulator/check.cc",
        "cuda/emulator/driver.cc",
        "cuda/emulator/executor.cc",
        "cuda/emulator/fiber.cc",
        "cuda/emulator/graph.cc",
        "cuda/emulator/module.cc",
        "cuda/emulator/nvrtc.cc",
        "cuda/emulator/tensor_map.cc"
      ],
      "cflags_cc": [
        "-O2",
        "-std=c++17",
        "-Wall",
        "-Wextra",
        "-Wno-unused-parameter",
        "-fvisibility=hidden"
      ],
      "cflags_cc!": [
        "-fno-exceptions",
        "-fno-rtti",
        "-std=gnu++17",
        "-std=gnu++20"
      ],
      "libraries": [
        "-ldl",
        "-lpthread"
      ]
    }
  ]
}
