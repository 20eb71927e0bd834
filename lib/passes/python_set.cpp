#include "passes/python_set.hpp"

namespace ppsched {

// CPython computes slot indices on size_t: a negative hash wraps, and perturb starts as the
// hash reinterpreted as unsigned. Keeping that arithmetic is what makes -1 (hash -2) land
// where Python puts it.

std::size_t PythonIntSet::find(std::int64_t key) const {
  const std::size_t mask = slots_.size() - 1;
  const auto hash = static_cast<std::size_t>(hash_of(key));
  std::size_t i = hash & mask;
  std::size_t perturb = hash;
  while (true) {
    std::size_t probes = i + kLinearProbes <= mask ? kLinearProbes : 0;
    for (std::size_t j = i;; ++j) {
      const Slot& slot = slots_[j];
      if (slot.state == State::Unused) return kNotFound;
      if (slot.state == State::Active && slot.key == key) return j;
      if (probes-- == 0) break;
    }
    perturb >>= kPerturbShift;
    i = (i * 5 + 1 + perturb) & mask;
  }
}

void PythonIntSet::add(std::int64_t key) {
  const std::size_t mask = slots_.size() - 1;
  const auto hash = static_cast<std::size_t>(hash_of(key));
  std::size_t i = hash & mask;
  std::size_t perturb = hash;
  std::size_t freeslot = kNotFound;
  std::size_t unused = kNotFound;
  while (unused == kNotFound) {
    std::size_t probes = i + kLinearProbes <= mask ? kLinearProbes : 0;
    for (std::size_t j = i;; ++j) {
      Slot& slot = slots_[j];
      if (slot.state == State::Unused) {
        unused = j;
        break;
      }
      if (slot.state == State::Active && slot.key == key) return;
      if (slot.state == State::Dummy) freeslot = j;  // the last dummy seen wins, as in 3.11
      if (probes-- == 0) break;
    }
    if (unused != kNotFound) break;
    perturb >>= kPerturbShift;
    i = (i * 5 + 1 + perturb) & mask;
  }
  if (freeslot != kNotFound) {  // a dummy is reused: fill does not grow, no resize
    slots_[freeslot] = {key, State::Active};
    ++used_;
    return;
  }
  slots_[unused] = {key, State::Active};
  ++fill_;
  ++used_;
  if (fill_ * 5 < mask * 3) return;
  resize(used_ > 50000 ? used_ * 2 : used_ * 4);
}

bool PythonIntSet::discard(std::int64_t key) {
  std::size_t j = find(key);
  if (j == kNotFound) return false;
  slots_[j].state = State::Dummy;
  --used_;
  return true;
}

void PythonIntSet::resize(std::size_t min_used) {
  std::size_t size = kMinSize;
  while (size <= min_used) size <<= 1;
  std::vector<Slot> old(size);
  old.swap(slots_);
  const std::size_t mask = size - 1;
  // set_insert_clean: the new table has no dummies and no key twice, so the first unused
  // slot along the probe sequence is where the key goes.
  for (const Slot& entry : old) {
    if (entry.state != State::Active) continue;
    const auto hash = static_cast<std::size_t>(hash_of(entry.key));
    std::size_t i = hash & mask;
    std::size_t perturb = hash;
    std::size_t target = kNotFound;
    while (target == kNotFound) {
      if (slots_[i].state == State::Unused) {
        target = i;
        break;
      }
      if (i + kLinearProbes <= mask) {
        for (std::size_t j = i + 1; j <= i + kLinearProbes; ++j) {
          if (slots_[j].state == State::Unused) {
            target = j;
            break;
          }
        }
      }
      if (target != kNotFound) break;
      perturb >>= kPerturbShift;
      i = (i * 5 + 1 + perturb) & mask;
    }
    slots_[target] = {entry.key, State::Active};
  }
  fill_ = used_;
}

std::vector<std::int64_t> PythonIntSet::items() const {
  std::vector<std::int64_t> out;
  out.reserve(used_);
  for_each([&](std::int64_t k) { out.push_back(k); });
  return out;
}

}  // namespace ppsched
