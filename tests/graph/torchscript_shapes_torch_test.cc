// The TorchScript front end's shape-rule table (graph/torchscript_shapes.h), called directly
// with hand-made aten calls: the lookup (unknown ops are kUnsupported, rules that need a
// tensor first argument say so), and one rule of each kind. The loader's tests cover the rules
// on real models, cross-checked against LibTorch's meta kernels.
#include <gtest/gtest.h>

#if __has_include(<torch/script.h>)  // the LibTorch headers the rules' header includes
#include "graph/torchscript_shapes.h"

namespace ftax::ts {
namespace {

class ShapeRulesTest : public ::testing::Test {
 protected:
  Val Input(std::vector<int64_t> dims, DType dt = DType::kFloat32,
            std::optional<std::vector<int64_t>> values = std::nullopt) {
    const std::string name = "in" + std::to_string(inputs_++);
    TensorInfo& t = g_.Tensor(name);
    t.dtype = dt;
    t.has_shape = true;
    for (int64_t d : dims) t.shape.push_back(Dim::Known(d));
    t.int_values = std::move(values);
    return Val::Tensor(name);
  }
  static Val Ints(std::vector<int64_t> v) {
    std::vector<Val> items;
    for (int64_t x : v) items.push_back(Val::Int(x));
    return Val::List(items);
  }
  Expected<std::vector<Val>> Infer(const std::string& op, std::vector<std::pair<std::string, Val>> args) {
    Call c;
    c.op = op;
    c.args = std::move(args);
    return rules_.Infer(c);
  }
  // "[2,3] fp32" for a tensor output.
  std::string Out(const Val& v) const {
    const TensorInfo* t = g_.Find(v.tensor);
    if (!t) return "not a tensor";
    std::string s = "[";
    for (size_t i = 0; i < t->shape.size(); ++i) s += (i ? "," : "") + std::to_string(t->shape[i].value);
    return s + "] " + DTypeName(t->dtype);
  }
  std::string Only(const Expected<std::vector<Val>>& r) const {
    if (!r.ok()) return "error: " + r.status().message();
    if (r->size() != 1) return std::to_string(r->size()) + " outputs";
    return Out(r.value()[0]);
  }

  Graph g_;
  ShapeRules rules_{&g_};
  int inputs_ = 0;
};

TEST_F(ShapeRulesTest, AnOpWithoutARuleIsUnsupported) {
  Expected<std::vector<Val>> r = Infer("no_such_op", {{"self", Input({2})}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kUnsupported);
  EXPECT_EQ(r.status().message(), "aten::no_such_op: no shape rule");
  // where(condition) alone (nonzero's shape) has none either: the meta kernel answers it.
  r = Infer("where", {{"condition", Input({4}, DType::kBool)}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kUnsupported);
}

TEST_F(ShapeRulesTest, ARuleOnSelfNeedsATensorFirst) {
  Expected<std::vector<Val>> r = Infer("relu", {{"self", Val::Int(3)}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidInput);
  EXPECT_EQ(r.status().message(), "aten::relu: first argument is not a tensor of known shape");
}

TEST_F(ShapeRulesTest, ElementWiseBroadcastsAndPromotes) {
  EXPECT_EQ(Only(Infer("gelu", {{"self", Input({2, 3}, DType::kFloat16)}})), "[2,3] fp16");
  EXPECT_EQ(Only(Infer("add", {{"self", Input({4, 1, 3})}, {"other", Input({5, 1})}, {"alpha", Val::Int(1)}})),
            "[4,5,3] fp32");
  EXPECT_EQ(Only(Infer("div", {{"self", Input({3}, DType::kInt64)}, {"other", Val::Int(2)}})), "[3] fp32");
  EXPECT_EQ(Only(Infer("lt", {{"self", Input({3})}, {"other", Val::Double(0.5)}})), "[3] bool");
  EXPECT_EQ(Only(Infer("cumsum", {{"self", Input({3}, DType::kInt32)}, {"dim", Val::Int(0)}})), "[3] int64");
  // Integer size arithmetic on 0-d tensors keeps its value.
  Expected<std::vector<Val>> r =
      Infer("mul", {{"self", Input({}, DType::kInt64, std::vector<int64_t>{6})}, {"other", Val::Int(7)}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(g_.Find(r.value()[0].tensor)->int_values, std::vector<int64_t>{42});
  EXPECT_EQ(Only(Infer("add", {{"self", Input({2, 3})}, {"other", Input({4})}})),
            "error: aten::add: shapes [2,3] and [4] do not broadcast");
}

TEST_F(ShapeRulesTest, NegAndAbsCarryKnownIntegers) {
  // Funnel's trace: arange(-seq_len * 2, ...) with seq_len a 0-d tensor from size().
  Expected<std::vector<Val>> r = Infer("neg", {{"self", Input({}, DType::kInt64, std::vector<int64_t>{128})}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(g_.Find(r.value()[0].tensor)->int_values, std::vector<int64_t>{-128});
  r = Infer("abs", {{"self", Input({2}, DType::kInt64, std::vector<int64_t>{-3, 4})}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(g_.Find(r.value()[0].tensor)->int_values, (std::vector<int64_t>{3, 4}));
  // A float tensor's values are never known: the shape alone.
  EXPECT_EQ(Only(Infer("neg", {{"self", Input({2, 3}, DType::kFloat16)}})), "[2,3] fp16");
}

TEST_F(ShapeRulesTest, MaxAlongADimGivesValuesAndIndices) {
  Expected<std::vector<Val>> r =
      Infer("max", {{"self", Input({2, 5, 3})}, {"dim", Val::Int(1)}, {"keepdim", Val::Bool(false)}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ(Out(r.value()[0]), "[2,3] fp32");
  EXPECT_EQ(Out(r.value()[1]), "[2,3] int64");
  EXPECT_EQ(Only(Infer("max", {{"self", Input({2, 5})}})), "[] fp32");
}

TEST_F(ShapeRulesTest, MatmulLinearAndAttention) {
  EXPECT_EQ(Only(Infer("linear", {{"input", Input({8, 128, 768})}, {"weight", Input({3072, 768})}})),
            "[8,128,3072] fp32");
  EXPECT_EQ(Only(Infer("linear", {{"input", Input({8, 100})}, {"weight", Input({10, 99})}})),
            "error: aten::linear: input [8,100] does not match weight [10,99]");
  EXPECT_EQ(Only(Infer("matmul", {{"self", Input({2, 1, 4, 8})}, {"other", Input({3, 8, 5})}})), "[2,3,4,5] fp32");
  EXPECT_EQ(Only(Infer("baddbmm", {{"self", Input({1})}, {"batch1", Input({6, 4, 8})}, {"batch2", Input({6, 8, 5})}})),
            "[6,4,5] fp32");
  EXPECT_EQ(Only(Infer("scaled_dot_product_attention",
                       {{"query", Input({2, 12, 128, 64})}, {"key", Input({2, 12, 128, 64})}, {"value", Input({2, 12, 128, 32})}})),
            "[2,12,128,32] fp32");
}

TEST_F(ShapeRulesTest, ConvolutionAndPooling) {
  EXPECT_EQ(Only(Infer("conv2d", {{"input", Input({2, 3, 224, 224})}, {"weight", Input({64, 3, 7, 7})},
                                  {"bias", Val::None()}, {"stride", Ints({2, 2})}, {"padding", Ints({3, 3})},
                                  {"dilation", Ints({1, 1})}, {"groups", Val::Int(1)}})),
            "[2,64,112,112] fp32");
  Expected<std::vector<Val>> r = Infer("max_pool2d_with_indices", {{"self", Input({2, 64, 112, 112})},
                                                                   {"kernel_size", Ints({3, 3})},
                                                                   {"stride", Ints({2, 2})},
                                                                   {"padding", Ints({1, 1})}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ(Out(r.value()[0]), "[2,64,56,56] fp32");
  EXPECT_EQ(Out(r.value()[1]), "[2,64,56,56] int64");
  EXPECT_EQ(Only(Infer("adaptive_avg_pool2d", {{"self", Input({2, 512, 7, 7})}, {"output_size", Ints({1, 1})}})),
            "[2,512,1,1] fp32");
}

TEST_F(ShapeRulesTest, ReductionsViewsAndIndexing) {
  EXPECT_EQ(Only(Infer("sum", {{"self", Input({2, 3}, DType::kBool)}, {"dim", Ints({1})}, {"keepdim", Val::Bool(true)}})),
            "[2,1] int64");
  // linalg_vector_norm(self, ord, dim, keepdim): F.normalize's norm.
  EXPECT_EQ(Only(Infer("linalg_vector_norm", {{"self", Input({2, 49, 32}, DType::kFloat16)}, {"ord", Val::Double(2.0)},
                                              {"dim", Ints({-1})}, {"keepdim", Val::Bool(true)}})),
            "[2,49,1] fp16");
  EXPECT_EQ(Only(Infer("view", {{"self", Input({2, 3, 4})}, {"size", Ints({6, -1})}})), "[6,4] fp32");
  EXPECT_EQ(Only(Infer("view", {{"self", Input({2, 3, 4})}, {"size", Ints({5, -1})}})),
            "error: aten::view: cannot view [2,3,4] as [5,-1]");
  EXPECT_EQ(Only(Infer("transpose", {{"self", Input({2, 3, 4})}, {"dim0", Val::Int(-1)}, {"dim1", Val::Int(0)}})),
            "[4,3,2] fp32");
  EXPECT_EQ(Only(Infer("slice", {{"self", Input({2, 10})}, {"dim", Val::Int(1)}, {"start", Val::Int(1)},
                                 {"end", Val::Int(-1)}, {"step", Val::Int(2)}})),
            "[2,4] fp32");
  EXPECT_EQ(Only(Infer("embedding", {{"weight", Input({30522, 768})}, {"indices", Input({8, 128}, DType::kInt64)}})),
            "[8,128,768] fp32");
  Expected<std::vector<Val>> r = Infer("split", {{"self", Input({2, 10})}, {"split_size", Val::Int(4)}, {"dim", Val::Int(1)}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 1u);
  ASSERT_EQ(r.value()[0].kind, Val::kList);
  ASSERT_EQ(r.value()[0].items.size(), 3u);
  EXPECT_EQ(Out(r.value()[0].items[2]), "[2,2] fp32");
  EXPECT_EQ(Only(Infer("cat", {{"tensors", Val::List({Input({2, 3}), Input({2, 5}, DType::kFloat64)})}, {"dim", Val::Int(1)}})),
            "[2,8] fp64");
}

TEST_F(ShapeRulesTest, CreationOps) {
  EXPECT_EQ(Only(Infer("arange", {{"end", Val::Int(10)}})), "[10] int64");
  EXPECT_EQ(Only(Infer("arange", {{"start", Val::Int(0)}, {"end", Val::Double(2.5)}, {"step", Val::Double(0.5)}})),
            "[5] fp32");
  EXPECT_EQ(Only(Infer("full", {{"size", Ints({2, 2})}, {"fill_value", Val::Bool(true)}})), "[2,2] bool");
  EXPECT_EQ(Only(Infer("new_zeros", {{"self", Input({1}, DType::kFloat16)}, {"size", Ints({3})}})), "[3] fp16");
  EXPECT_EQ(Only(Infer("zeros", {{"size", Val::None()}})), "error: aten::zeros: size not known from shapes");
}

// What the walk answers for a tensor's placement: the GPU the model runs on, for both ways
// scripted code asks (x.device and x.is_cuda), and no gradient (inference).
TEST_F(ShapeRulesTest, ATensorIsOnTheGpuWithoutGradient) {
  const Val x = Input({2, 3});
  const Val device = PrimScalar("prim::device", {x}, g_);
  ASSERT_EQ(device.kind, Val::kStr);
  EXPECT_EQ(device.s, "cuda:0");
  const Val is_cuda = PrimScalar("prim::is_cuda", {x}, g_);
  ASSERT_EQ(is_cuda.kind, Val::kBool);
  EXPECT_TRUE(is_cuda.b);
  const Val grad = PrimScalar("prim::requires_grad", {x}, g_);
  ASSERT_EQ(grad.kind, Val::kBool);
  EXPECT_FALSE(grad.b);
  EXPECT_EQ(PrimScalar("prim::unknown_query", {x}, g_).kind, Val::kUnknown);
}

}  // namespace
}  // namespace ftax::ts

#else
TEST(ShapeRulesTest, NeedsTheLibTorchHeaders) { GTEST_SKIP() << "LibTorch's headers are not on this build's include path"; }
#endif
