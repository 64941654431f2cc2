// Trains a character-level transformer (GPT-style: token and learned position embeddings, causal
// pre-norm transformer blocks, a final layer norm and a linear read-out) on English text every
// Debian machine has: the licence texts in /usr/share/common-licenses (GPL-3, GPL-2, LGPL-2.1,
// Apache-2.0, MPL-2.0), read at run time. The last tenth of each text is held out. The training
// step is recorded once and replayed (ad::compile) with Adam; the held-out loss is compared with
// the unigram entropy (the loss of predicting each character from its frequency alone), then the
// model writes a line of text.
// Usage: train_char_transformer [steps] [directory of the licence texts]   (defaults: 400, /usr/share/common-licenses)
#include <fusor/fusor.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "train_char_transformer: cannot read %s\n", file.string().c_str());
    std::exit(2);
  }
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

int main(int argc, char** argv) {
  using namespace fusor;
  namespace nn = ad::nn;
  const int steps = argc > 1 ? std::atoi(argv[1]) : 400;
  const std::filesystem::path dir = argc > 2 ? argv[2] : "/usr/share/common-licenses";
  constexpr index_t context = 64, d = 128, batch = 32;

  // the texts: the first nine tenths of each to train on, the last tenth held out
  std::string train, held_out;
  for (const char* name : {"GPL-3", "GPL-2", "LGPL-2.1", "Apache-2.0", "MPL-2.0"}) {
    const std::string text = read_text(dir / name);
    const std::size_t cut = text.size() * 9 / 10;
    train += text.substr(0, cut);
    held_out += text.substr(cut);
  }
  // the alphabet: every byte of the training text (a held-out byte outside it is skipped)
  std::array<int, 256> code;
  code.fill(-1);
  std::vector<unsigned char> alphabet;
  for (unsigned char c : train)
    if (code[c] < 0) code[c] = 0, alphabet.push_back(c);
  std::sort(alphabet.begin(), alphabet.end());
  for (std::size_t i = 0; i < alphabet.size(); ++i) code[alphabet[i]] = int(i);
  const index_t vocab = index_t(alphabet.size());
  const auto encode = [&](const std::string& s) {
    std::vector<std::int64_t> ids;
    for (unsigned char c : s)
      if (code[c] >= 0) ids.push_back(code[c]);
    return ids;
  };
  const std::vector<std::int64_t> train_ids = encode(train), test_ids = encode(held_out);
  // the unigram entropy: the held-out text's cross-entropy under the training text's frequencies
  std::vector<double> freq(std::size_t(vocab), 1.0);  // add-one smoothing
  for (std::int64_t t : train_ids) freq[std::size_t(t)] += 1;
  double unigram = 0;
  for (std::int64_t t : test_ids) unigram -= std::log(freq[std::size_t(t)] / double(train_ids.size() + std::size_t(vocab)));
  unigram /= double(test_ids.size());
  std::printf("text: %zu training and %zu held-out characters, %lld symbols; unigram entropy %.3f nats\n", train_ids.size(),
              test_ids.size(), static_cast<long long>(vocab), unigram);

  auto model = nn::sequential<float>(nn::embedding(vocab, d), nn::positional_embedding(context, d),
                                     nn::transformer_encoder_layer(d, 4, 4 * d, {.causal = true}),
                                     nn::transformer_encoder_layer(d, 4, 4 * d, {.causal = true}), nn::layer_norm(d),
                                     nn::linear(d, vocab));
  nn::parameters<float> params = model.init(2026);
  std::size_t count = 0;
  for (const auto& [name, p] : params) count += std::size_t(p.size());
  std::printf("model: 2 causal blocks, d = %lld, 4 heads, context %lld, %zu parameters\n", static_cast<long long>(d),
              static_cast<long long>(context), count);

  // a batch: `batch` windows of the training text at random offsets, the targets shifted by one
  array<std::int64_t> x(extents{batch, context}), y(extents{batch, context});
  random::generator rng(7);
  const auto draw_batch = [&] {
    const array<std::int64_t> starts =
        random::integers<std::int64_t>(rng, extents{batch}, 0, std::int64_t(train_ids.size()) - context - 1);
    for (index_t b = 0; b < batch; ++b)
      for (index_t t = 0; t < context; ++t) {
        x(b, t) = train_ids[std::size_t(starts(b) + t)];
        y(b, t) = train_ids[std::size_t(starts(b) + t + 1)];
      }
  };
  draw_batch();
  auto loss_of = [&](const auto& p, const auto& xs, const auto& ys) { return nn::cross_entropy(model(p, xs), ys); };
  auto step = ad::compile(loss_of, params, x, y);  // recorded once; every later call replays it
  ad::optim::adam<float, cpu> opt({.lr = 5e-3});

  // the held-out loss: every whole window of the held-out text, in batches
  const auto held_out_loss = [&] {
    const index_t windows = index_t((test_ids.size() - 1) / std::size_t(context));
    double total = 0;
    for (index_t w0 = 0; w0 < windows; w0 += batch) {
      const index_t n = std::min(batch, windows - w0);
      array<std::int64_t> xs(extents{n, context}), ys(extents{n, context});
      for (index_t b = 0; b < n; ++b)
        for (index_t t = 0; t < context; ++t) {
          xs(b, t) = test_ids[std::size_t((w0 + b) * context + t)];
          ys(b, t) = test_ids[std::size_t((w0 + b) * context + t + 1)];
        }
      total += double(nn::cross_entropy(model(params, xs), ys)) * double(n);
    }
    return total / double(windows);
  };

  const nn::stopwatch clock;
  double running = 0;
  for (int s = 1; s <= steps; ++s) {
    draw_batch();
    auto [loss, grads] = step(params, x, y);
    opt.step(params, grads);
    running = s == 1 ? double(loss) : 0.95 * running + 0.05 * double(loss);
    if (s % 100 == 0 || s == steps)
      std::printf("step %4d  training loss %.3f  (%.1f ms a step)\n", s, running, 1e3 * clock.seconds() / s);
  }
  const double test_loss = held_out_loss();
  std::printf("held-out loss %.3f nats a character (unigram entropy %.3f): %.0f%% of it\n", test_loss, unigram,
              100 * test_loss / unigram);

  // a line of text: sampled a character at a time at temperature 0.8 from the last position's
// logits, until a line break after 60 characters (earlier ones become spaces) or 120 characters
  std::string line = "This License";
  random::generator sampler(1);
  for (int k = 0; k < 120; ++k) {
    const std::vector<std::int64_t> ids = encode(line.substr(line.size() > std::size_t(context) ? line.size() - context : 0));
    array<std::int64_t> xs(extents{1, index_t(ids.size())});
    for (std::size_t t = 0; t < ids.size(); ++t) xs(0, index_t(t)) = ids[t];
    const array<float> logits = model(params, xs);
    const array<float> p = ad::softmax(logits(0, index_t(ids.size()) - 1, range()) / 0.8f);
    double u = double(random::uniform<float>(sampler, extents{1})(0)), acc = 0;
    index_t pick = vocab - 1;
    for (index_t c = 0; c < vocab; ++c)
      if ((acc += double(p(c))) > u) {
        pick = c;
        break;
      }
    const char next = char(alphabet[std::size_t(pick)]);
    if (next == '\n' && line.size() >= 60) break;  // the licences' lines are about 70 characters
    line += next == '\n' ? ' ' : next;
  }
  std::printf("sample: %s\n", line.c_str());
  if (!(test_loss < 0.8 * unigram)) {
    std::printf("train_char_transformer: FAILED (expected a held-out loss below 80%% of the unigram entropy)\n");
    return 1;
  }
  std::printf("train_char_transformer: ok\n");
  return 0;
}
