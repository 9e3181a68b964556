// The objects the event stream names, kept alive by the profiler: a key (a code object's or a
// PyMethodDef's address) stays a valid identity only while the object behind it lives, since a
// freed address may be reused by another function. The producer looks every call's key up here,
// under the GIL, so the common case (a key seen before) is one probe of a flat table; the first
// sighting stores the object, and the caller takes a reference to it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hspcprof {

class KeySet {
 public:
  KeySet() : slots_(kInitialSlots) {}

  // True when key was not there yet and has now been stored with value. Inline up to the first
  // empty slot: the producer asks at every call, and almost always for a key stored already.
  bool insert(std::uintptr_t key, void* value) {
    for (std::size_t i = index(key);; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return false;
      if (slots_[i].key == 0) return store(i, key, value);
    }
  }

  void* find(std::uintptr_t key) const noexcept {
    for (std::size_t i = index(key); slots_[i].key != 0; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return slots_[i].value;
    }
    return nullptr;
  }

  template <class F>
  void for_each_value(F&& f) const {
    for (const Slot& s : slots_) {
      if (s.key != 0) f(s.value);
    }
  }

  void clear() {
    slots_.assign(kInitialSlots, Slot{});
    mask_ = kInitialSlots - 1;
    size_ = 0;
  }

  std::size_t size() const noexcept { return size_; }

 private:
  struct Slot {
    std::uintptr_t key = 0;
    void* value = nullptr;
  };
  static constexpr std::size_t kInitialSlots = 1024;  // a power of two

  // Fibonacci hashing: addresses differ mostly in their middle bits, which the multiply spreads
  // into the top bits the index takes.
  std::size_t index(std::uintptr_t key) const noexcept {
    const std::uint64_t mixed = static_cast<std::uint64_t>(key) * 0x9E3779B97F4A7C15ull;
    return static_cast<std::size_t>(mixed >> 32) & mask_;
  }

  [[gnu::noinline]] bool store(std::size_t i, std::uintptr_t key, void* value) {
    slots_[i] = Slot{key, value};
    if (++size_ * 4 > slots_.size() * 3) grow();
    return true;
  }

  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    mask_ = slots_.size() - 1;
    size_ = 0;
    for (const Slot& s : old) {
      if (s.key != 0) insert(s.key, s.value);
    }
  }

  std::vector<Slot> slots_;
  std::size_t mask_ = kInitialSlots - 1;  // slots_.size() - 1, kept: one load less per probe
  std::size_t size_ = 0;
};

}  // namespace hspcprof
