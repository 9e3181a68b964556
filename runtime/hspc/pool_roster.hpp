#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <thread>

#include "hspc/pool_control.hpp"

namespace hspc {

namespace detail {

// PoolRoster: a BasicConsumerPool's producers (a PoolDeal each) as its consumers see them: a fixed
// array of deals, each published once and read by every consumer without a lock, and the reuse of
// deals whose producers have finished and left, so that at most kMaxDeals are alive at once
// however many come and go over the pool's life.
template <class Deal>
class PoolRoster {
 public:
  using Lane = typename Deal::Lane;
  using Lot = typename Deal::Lot;
  using Producer = typename Deal::Producer;
  static constexpr std::size_t kMaxDeals = 256;

  // A lane some consumer may take now, and its deal.
  struct Found {
    Deal* deal;
    Lane* lane;
  };

  // Every deal gets `lanes` lanes (1: ordered).
  PoolRoster(std::size_t lanes, Lot& lot) noexcept : lanes_(lanes), lot_(lot) {}
  ~PoolRoster() {
    for (std::size_t i = size(); i > 0; --i) delete deal(i - 1);
  }
  PoolRoster(const PoolRoster&) = delete;
  PoolRoster& operator=(const PoolRoster&) = delete;

  // Deals made so far: producers alive, and finished ones kept for reuse.
  std::size_t size() const noexcept { return count_.load(std::memory_order_acquire); }
  Deal* deal(std::size_t i) const noexcept { return deals_[i].load(std::memory_order_acquire); }

  // A producer for a new thread (callers one at a time): the first reusable deal, reopened, or a
  // new one, which consumers see from their next look. With all kMaxDeals made, it waits for a
  // closed producer's events to be handled, and throws std::length_error if none has closed. A
  // reuse leaves size() as it was.
  Producer& add() {
    const std::size_t n = size();
    for (bool closed = true; closed; std::this_thread::yield()) {
      closed = false;
      for (std::size_t i = 0; i < n; ++i) {
        Deal* d = deal(i);
        if (d->reusable()) {
          d->reopen();
          added_.fetch_add(1, std::memory_order_release);
          return d->producer;
        }
        closed = closed || d->left();
      }
      if (n < kMaxDeals) break;
    }
    if (n == kMaxDeals) {
      throw std::length_error("BasicConsumerPool: 256 producers alive at once already");
    }
    Deal* made = new Deal(lanes_, lot_, n);
    deals_[n].store(made, std::memory_order_release);
    count_.store(n + 1, std::memory_order_release);
    added_.fetch_add(1, std::memory_order_release);
    return made->producer;
  }

  // A producer finished (its deal's last lane end seen); true if every one added has.
  bool finished_one() noexcept {
    return finished_.fetch_add(1, std::memory_order_acq_rel) + 1 ==
           added_.load(std::memory_order_acquire);
  }
  // Every producer added so far has finished (add() callers excluded: under their lock).
  bool all_finished() const noexcept {
    return finished_.load(std::memory_order_acquire) == added_.load(std::memory_order_acquire);
  }
  // The lanes of producers not yet finished: the most consumers that can help (finished read
  // first, so that the difference is never negative).
  std::size_t open_lanes() const noexcept {
    const std::size_t finished = finished_.load(std::memory_order_acquire);
    return (added_.load(std::memory_order_acquire) - finished) * lanes_;
  }

  // The next wanted lane, round robin over the deals from deal `next` (which moves past it) and
  // from lane `from` within each; {nullptr, nullptr} if there is none now.
  Found find(std::size_t& next, std::size_t from) const noexcept {
    const std::size_t n = size();
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t at = (next + i) % n;
      Deal* d = deal(at);
      if (Lane* wanted = d->wanted_lane(from)) {
        next = at + 1;
        return {d, wanted};
      }
    }
    return {nullptr, nullptr};
  }

  // Adds every lane's wait still going at `now` to t.
  void add_to(PoolTotals& t, std::int64_t now) const noexcept {
    for (std::size_t i = size(); i > 0; --i) deal(i - 1)->add_to(t, now);
  }

 private:
  const std::size_t lanes_;
  Lot& lot_;
  std::atomic<Deal*> deals_[kMaxDeals] = {};
  std::atomic<std::size_t> count_{0};
  std::atomic<std::size_t> added_{0};     // producers added, reuses included
  std::atomic<std::size_t> finished_{0};  // producers finished
};

}  // namespace detail

}  // namespace hspc
