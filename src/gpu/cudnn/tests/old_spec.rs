//! The SDPA graph as the builder before `Problem` made it, dumped: the
//! plain fp16 case must still build exactly this.

/// The last commit before Problem (18ecee2), B2 H8 S512 D64 fp16 causal:
/// sdpa_graph_spec(Shape { b: 2, h: 8, s: 512, d: 64 }, true), dumped.
pub(super) const OLD_SPEC_CAUSAL: &str = r#"TensorSpec { uid: 1, dtype: CUDNN_DATA_HALF, dims: [2, 8, 512, 64], strides: [262144, 32768, 64, 1], is_virtual: false, by_value: false }
TensorSpec { uid: 2, dtype: CUDNN_DATA_HALF, dims: [2, 8, 64, 512], strides: [262144, 32768, 1, 64], is_virtual: false, by_value: false }
TensorSpec { uid: 3, dtype: CUDNN_DATA_HALF, dims: [2, 8, 512, 64], strides: [262144, 32768, 64, 1], is_virtual: false, by_value: false }
TensorSpec { uid: 4, dtype: CUDNN_DATA_HALF, dims: [2, 8, 512, 64], strides: [262144, 32768, 64, 1], is_virtual: false, by_value: false }
TensorSpec { uid: 100, dtype: CUDNN_DATA_FLOAT, dims: [2, 8, 512, 512], strides: [2097152, 262144, 512, 1], is_virtual: true, by_value: false }
TensorSpec { uid: 5, dtype: CUDNN_DATA_FLOAT, dims: [1, 1, 1, 1], strides: [1, 1, 1, 1], is_virtual: false, by_value: true }
TensorSpec { uid: 101, dtype: CUDNN_DATA_FLOAT, dims: [2, 8, 512, 512], strides: [2097152, 262144, 512, 1], is_virtual: true, by_value: false }
TensorSpec { uid: 102, dtype: CUDNN_DATA_INT32, dims: [2, 8, 512, 512], strides: [2097152, 262144, 512, 1], is_virtual: true, by_value: false }
TensorSpec { uid: 103, dtype: CUDNN_DATA_INT32, dims: [2, 8, 512, 512], strides: [2097152, 262144, 512, 1], is_virtual: true, by_value: false }
TensorSpec { uid: 104, dtype: CUDNN_DATA_BOOLEAN, dims: [2, 8, 512, 512], strides: [2097152, 262144, 512, 1], is_virtual: true, by_value: false }
TensorSpec { uid: 6, dtype: CUDNN_DATA_FLOAT, dims: [1, 1, 1, 1], strides: [1, 1, 1, 1], is_virtual: false, by_value: true }
TensorSpec { uid: 105, dtype: CUDNN_DATA_FLOAT, dims: [2, 8, 512, 512], strides: [2097152, 262144, 512, 1], is_virtual: true, by_value: false }
TensorSpec { uid: 106, dtype: CUDNN_DATA_FLOAT, dims: [2, 8, 512, 1], strides: [4096, 512, 1, 1], is_virtual: true, by_value: false }
TensorSpec { uid: 107, dtype: CUDNN_DATA_FLOAT, dims: [2, 8, 512, 512], strides: [2097152, 262144, 512, 1], is_virtual: true, by_value: false }
TensorSpec { uid: 108, dtype: CUDNN_DATA_FLOAT, dims: [2, 8, 512, 512], strides: [2097152, 262144, 512, 1], is_virtual: true, by_value: false }
TensorSpec { uid: 109, dtype: CUDNN_DATA_FLOAT, dims: [2, 8, 512, 1], strides: [4096, 512, 1, 1], is_virtual: true, by_value: false }
TensorSpec { uid: 110, dtype: CUDNN_DATA_FLOAT, dims: [2, 8, 512, 1], strides: [4096, 512, 1, 1], is_virtual: true, by_value: false }
TensorSpec { uid: 111, dtype: CUDNN_DATA_FLOAT, dims: [2, 8, 512, 1], strides: [4096, 512, 1, 1], is_virtual: true, by_value: false }
TensorSpec { uid: 112, dtype: CUDNN_DATA_HALF, dims: [2, 8, 512, 512], strides: [2097152, 262144, 512, 1], is_virtual: true, by_value: false }
Matmul { a: 1, b: 2, c: 100 }
Pointwise { mode: CUDNN_POINTWISE_MUL, math: CUDNN_DATA_FLOAT, axis: None, x: 100, b: Some(5), t: None, y: 101 }
Pointwise { mode: CUDNN_POINTWISE_GEN_INDEX, math: CUDNN_DATA_FLOAT, axis: Some(2), x: 101, b: None, t: None, y: 102 }
Pointwise { mode: CUDNN_POINTWISE_GEN_INDEX, math: CUDNN_DATA_FLOAT, axis: Some(3), x: 101, b: None, t: None, y: 103 }
Pointwise { mode: CUDNN_POINTWISE_CMP_GE, math: CUDNN_DATA_BOOLEAN, axis: None, x: 102, b: Some(103), t: None, y: 104 }
Pointwise { mode: CUDNN_POINTWISE_BINARY_SELECT, math: CUDNN_DATA_FLOAT, axis: None, x: 101, b: Some(6), t: Some(104), y: 105 }
Reduce { op: CUDNN_REDUCE_TENSOR_MAX, x: 105, y: 106 }
Pointwise { mode: CUDNN_POINTWISE_SUB, math: CUDNN_DATA_FLOAT, axis: None, x: 105, b: Some(106), t: None, y: 107 }
Pointwise { mode: CUDNN_POINTWISE_EXP, math: CUDNN_DATA_FLOAT, axis: None, x: 107, b: None, t: None, y: 108 }
Reduce { op: CUDNN_REDUCE_TENSOR_ADD, x: 108, y: 109 }
Pointwise { mode: CUDNN_POINTWISE_LOG, math: CUDNN_DATA_FLOAT, axis: None, x: 109, b: None, t: None, y: 110 }
Pointwise { mode: CUDNN_POINTWISE_ADD, math: CUDNN_DATA_FLOAT, axis: None, x: 106, b: Some(110), t: None, y: 111 }
Pointwise { mode: CUDNN_POINTWISE_DIV, math: CUDNN_DATA_FLOAT, axis: None, x: 108, b: Some(109), t: None, y: 112 }
Matmul { a: 112, b: 3, c: 4 }
"#;
/// The same, not causal.
pub(super) const OLD_SPEC_PLAIN: &str = r#"TensorSpec { uid: 1, dtype: CUDNN_DATA_HALF, dims: [2, 8, 512, 64], strides: [262144, 32768, 64, 1], is_virtual: false, by_value: false }
TensorSpec { uid: 2, dtype: CUDNN_DATA_HALF, dims: [2, 8, 64, 512], strides: [262144, 32768, 1, 64], is_virtual: false, by_value: false }
TensorSpec { uid: 3, dtype: CUDNN_DATA_HALF, dims: [2, 8, 512, 64], strides: [262144, 32768, 64, 1], is_virtual: false, by_value: false }
TensorSpec { uid: 4, dtype: CUDNN_DATA_HALF, dims: [2, 8, 512, 64], strides: [262144, 32768, 64, 1], is_virtual: false, by_value: false }
TensorSpec { uid: 100, dtype: CUDNN_DATA_FLOAT, dims: [2, 8, 512, 512], strides: [2097152, 262144, 512, 1], is_virtual: true, by_value: false }
TensorSpec { uid: 5, dtype: CUDNN_DATA_FLOAT, dims: [1, 1, 1, 1], strides: [1, 1, 1, 1], is_virtual: false, by_value: true }
TensorSpec { uid: 101, dtype: CUDNN_DATA_FLOAT, dims: [2, 8, 512, 512], strides: [2097152, 262144, 512, 1], is_virtual: true, by_value: false }
TensorSpec { uid: 102, dtype: CUDNN_DATA_FLOAT, dims: [2, 8, 512, 1], strides: [4096, 512, 1, 1], is_virtual: true, by_value: false }
TensorSpec { uid: 103, dtype: CUDNN_DATA_FLOAT, dims: [2, 8, 512, 512], strides: [2097152, 262144, 512, 1], is_virtual: true, by_value: false }
TensorSpec { uid: 104, dtype: CUDNN_DATA_FLOAT, dims: [2, 8, 512, 512], strides: [2097152, 262144, 512, 1], is_virtual: true, by_value: false }
TensorSpec { uid: 105, dtype: CUDNN_DATA_FLOAT, dims: [2, 8, 512, 1], strides: [4096, 512, 1, 1], is_virtual: true, by_value: false }
TensorSpec { uid: 106, dtype: CUDNN_DATA_FLOAT, dims: [2, 8, 512, 1], strides: [4096, 512, 1, 1], is_virtual: true, by_value: false }
TensorSpec { uid: 107, dtype: CUDNN_DATA_FLOAT, dims: [2, 8, 512, 1], strides: [4096, 512, 1, 1], is_virtual: true, by_value: false }
TensorSpec { uid: 108, dtype: CUDNN_DATA_HALF, dims: [2, 8, 512, 512], strides: [2097152, 262144, 512, 1], is_virtual: true, by_value: false }
Matmul { a: 1, b: 2, c: 100 }
Pointwise { mode: CUDNN_POINTWISE_MUL, math: CUDNN_DATA_FLOAT, axis: None, x: 100, b: Some(5), t: None, y: 101 }
Reduce { op: CUDNN_REDUCE_TENSOR_MAX, x: 101, y: 102 }
Pointwise { mode: CUDNN_POINTWISE_SUB, math: CUDNN_DATA_FLOAT, axis: None, x: 101, b: Some(102), t: None, y: 103 }
Pointwise { mode: CUDNN_POINTWISE_EXP, math: CUDNN_DATA_FLOAT, axis: None, x: 103, b: None, t: None, y: 104 }
Reduce { op: CUDNN_REDUCE_TENSOR_ADD, x: 104, y: 105 }
Pointwise { mode: CUDNN_POINTWISE_LOG, math: CUDNN_DATA_FLOAT, axis: None, x: 105, b: None, t: None, y: 106 }
Pointwise { mode: CUDNN_POINTWISE_ADD, math: CUDNN_DATA_FLOAT, axis: None, x: 102, b: Some(106), t: None, y: 107 }
Pointwise { mode: CUDNN_POINTWISE_DIV, math: CUDNN_DATA_FLOAT, axis: None, x: 104, b: Some(105), t: None, y: 108 }
Matmul { a: 108, b: 3, c: 4 }
"#;
