#pragma once
// Checkpoints: a model's named parameters, and optionally an optimizer's state, in one .npz
// archive that NumPy reads (np.load(path)["0.weight"]), as PyTorch's state_dict / torch.save.
//
// Entries: each parameter under its name ("0.weight"); an optimizer's step count under
// "optimizer.<name>.steps" (a 0-d int64) and its state under "optimizer.<name>.<slot>.<parameter>"
// (e.g. Adam's second moments of "0.weight": "optimizer.adam.1.0.weight").
//
// Loading is strict, like load_state_dict(strict=True): the archive must hold every parameter of
// the map, with its shape and element type, and nothing else (optimizer entries are skipped when
// no optimizer is given). Everything is read and checked before anything is changed, so a failed
// load leaves the parameters and the optimizer as they were; parameters are then overwritten in
// place (their buffers stay where they were).
#include <concepts>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../../core/array.hpp"
#include "../../core/create.hpp"
#include "../../core/error.hpp"
#include "../../core/ext.hpp"
#include "../../io/npz.hpp"
#include "../optim/optimizers.hpp"
#include "sequential.hpp"

namespace fusor::ad::nn {

namespace detail {
inline constexpr std::string_view optimizer_entries = "optimizer.";

inline bool is_optimizer_entry(std::string_view name) { return name.substr(0, optimizer_entries.size()) == optimizer_entries; }

inline std::string optimizer_prefix(const char* name) { return std::string(optimizer_entries) + name + "."; }

template <class T, class B>
void check_names(const parameters<T, B>& params) {
  for (const auto& [name, p] : params)
    if (is_optimizer_entry(name))
      throw value_error("fusor::ad::nn: the parameter name '" + name +
                        "' starts with 'optimizer.', which checkpoints keep for the optimizer's state (rename it)");
}

template <class T, class B>
void add_parameters(npz_writer& w, const parameters<T, B>& params) {
  check_names(params);
  for (const auto& [name, p] : params) w.add(name, p);
}

template <class T, class B, class Opt>
void add_optimizer(npz_writer& w, const parameters<T, B>& params, const Opt& opt) {
  const auto& state = opt.state();
  const std::string prefix = optimizer_prefix(opt.name());
  if (!state.empty()) {
    bool same = state[0].size() == params.size();
    std::size_t i = 0;
    for (auto it = params.begin(); same && it != params.end(); ++it, ++i) same = state[0][i].shape() == it->second.shape();
    if (!same)
      throw value_error("fusor::ad::nn::save_parameters: the optimizer's state is for " + std::to_string(state[0].size()) +
                        " parameters, not for these " + std::to_string(params.size()) +
                        " (expected the parameters the optimizer steps, with their shapes, in their map order)");
  }
  w.add(prefix + "steps", full<std::int64_t, host_backend_t<B>>(extents{}, std::int64_t(opt.steps())));
  for (std::size_t k = 0; k < state.size(); ++k) {
    std::size_t i = 0;
    for (const auto& [name, p] : params) w.add(prefix + std::to_string(k) + "." + name, state[k][i++]);
  }
}

// Reads entry `name` as the parameter-shaped array `like`: io_error when missing, shape_error on
// another shape, dtype_error on another element type.
template <class T, class B>
array<T, B> read_like(const npz_archive& z, const std::string& name, const array<T, B>& like, std::string_view what) {
  if (!z.contains(name))
    throw io_error("fusor::ad::nn::load_parameters: the archive '" + z.path().string() + "' has no " + std::string(what) + " '" +
                   name + "'");
  array<T, B> a = z.load<T, B>(name);
  if (a.shape() != like.shape())
    throw shape_error("fusor::ad::nn::load_parameters: '" + name + "' in '" + z.path().string() + "' has shape " +
                      to_string(a.shape()) + ", expected " + to_string(like.shape()));
  return a;
}

template <class T, class B>
std::vector<array<T, B>> read_parameters(const npz_archive& z, const parameters<T, B>& params, bool with_optimizer) {
  std::vector<std::string> missing, unexpected;
  for (const auto& [name, p] : params)
    if (!z.contains(name)) missing.push_back(name);
  for (const std::string& name : z.names())
    if (!params.contains(name) && !is_optimizer_entry(name)) unexpected.push_back(name);
  if (!missing.empty() || !unexpected.empty())
    throw io_error("fusor::ad::nn::load_parameters: the archive '" + z.path().string() + "' does not hold these parameters: " +
                   "missing " + fusor::ext::name_list(missing) + "; unexpected " +
                   fusor::ext::name_list(unexpected) + (with_optimizer ? "" : " (expected exactly the map's names)"));
  std::vector<array<T, B>> values;
  values.reserve(params.size());
  for (const auto& [name, p] : params) values.push_back(read_like(z, name, p, "parameter"));
  return values;
}

template <class T, class B, class Opt>
std::pair<std::int64_t, std::vector<std::vector<array<T, B>>>> read_optimizer(const npz_archive& z, const parameters<T, B>& params,
                                                                               const Opt& opt) {
  const std::string prefix = optimizer_prefix(opt.name());
  std::vector<std::string> others;
  for (const std::string& name : z.names())
    if (is_optimizer_entry(name) && name.substr(0, prefix.size()) != prefix) others.push_back(name);
  if (!z.contains(prefix + "steps"))
    throw io_error("fusor::ad::nn::load_parameters: the archive '" + z.path().string() + "' has no state of the optimizer '" +
                   opt.name() + "' (expected the entry '" + prefix + "steps'; its optimizer entries: " +
                   fusor::ext::name_list(others) + ")");
  if (!others.empty())
    throw io_error("fusor::ad::nn::load_parameters: the archive '" + z.path().string() + "' holds the state of another optimizer (" +
                   fusor::ext::name_list(others) + ") besides '" + opt.name() + "'");
  const auto steps = z.load<std::int64_t, host_backend_t<B>>(prefix + "steps");  // (a number: on the host)
  if (steps.size() != 1)
    throw shape_error("fusor::ad::nn::load_parameters: '" + prefix + "steps' has shape " + to_string(steps.shape()) +
                      ", expected a single number");
  // slots 0, 1, ... while the first parameter has one; then every parameter must have each
  std::vector<std::vector<array<T, B>>> state;
  std::size_t used = 1;
  if (!params.empty())
    for (std::size_t k = 0; z.contains(prefix + std::to_string(k) + "." + params.begin()->first); ++k) {
      std::vector<array<T, B>> slot;
      for (const auto& [name, p] : params) slot.push_back(read_like(z, prefix + std::to_string(k) + "." + name, p, "optimizer state"));
      state.push_back(std::move(slot));
      used += params.size();
    }
  std::size_t present = 0;
  for (const std::string& name : z.names()) present += name.substr(0, prefix.size()) == prefix;
  if (present != used)
    throw io_error("fusor::ad::nn::load_parameters: the archive '" + z.path().string() + "' holds " + std::to_string(present) +
                   " entries of the optimizer '" + opt.name() + "', expected " + std::to_string(used) +
                   " (its step count and one array per parameter and slot)");
  return {steps.item(), std::move(state)};
}

template <class T, class B>
void overwrite(parameters<T, B>& params, std::vector<array<T, B>>& values) {
  std::size_t i = 0;
  for (auto& [name, p] : params) p.view() = values[i++];
}
}  // namespace detail

/// Writes the parameters to an .npz archive at `path` (replacing a file there), one entry per name.
template <class T, class B>
void save_parameters(const std::filesystem::path& path, const parameters<T, B>& params,
                     npz_compression compression = npz_compression::stored) {
  npz_writer w(path, compression);
  detail::add_parameters(w, params);
  w.close();
}
/// Writes the parameters and the state of the optimizer that steps them (its step count, its
/// moments), so that training can resume where it stopped.
template <class T, class B, class Opt>
  requires std::derived_from<Opt, optim::optimizer_state<T, B>>
void save_parameters(const std::filesystem::path& path, const parameters<T, B>& params, const Opt& optimizer,
                     npz_compression compression = npz_compression::stored) {
  npz_writer w(path, compression);
  detail::add_parameters(w, params);
  detail::add_optimizer(w, params, optimizer);
  w.close();
}

/// Overwrites `params` (its names and shapes say what to expect, e.g. model.init(seed)'s) with
/// an archive's; an optimizer's entries in the archive are skipped. Throws io_error for a missing
/// or unexpected name, shape_error for another shape, dtype_error for another element type.
template <class T, class B>
void load_parameters(const std::filesystem::path& path, parameters<T, B>& params) {
  const npz_archive z(path);
  std::vector<array<T, B>> values = detail::read_parameters(z, params, false);
  detail::overwrite(params, values);
}
/// The same, and the optimizer continues from the saved state (its step count and moments; the
/// archive must hold the state of an optimizer of the same kind).
template <class T, class B, class Opt>
  requires std::derived_from<Opt, optim::optimizer_state<T, B>>
void load_parameters(const std::filesystem::path& path, parameters<T, B>& params, Opt& optimizer) {
  const npz_archive z(path);
  std::vector<array<T, B>> values = detail::read_parameters(z, params, true);
  auto [steps, state] = detail::read_optimizer(z, params, optimizer);
  optimizer.load_state(steps, std::move(state));
  detail::overwrite(params, values);
}

}  // namespace fusor::ad::nn
