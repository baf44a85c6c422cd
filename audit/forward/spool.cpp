// Forwarding at least once: the log is the spool, a cursor file says how far the target has it
// (docs/formats/audit-forward.md, "Delivery").
#include "sealtrain/audit/forward_spool.h"

#include "sealtrain/audit/tree_head.h"
#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/base/logging.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

namespace sealtrain::audit {
namespace {

std::int64_t unixNow()
{
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

Error cursorUnreadable(const std::filesystem::path& path, std::string_view why)
{
    return Error(ErrorCode::Integrity,
                 fmt::format("The audit forward cursor '{}' is not one this build writes ({}); "
                             "move it away and the target gets every entry again.",
                             path.string(), why));
}

}  // namespace

Result<std::optional<ForwardCursor>> readForwardCursor(const std::filesystem::path& path)
{
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        return std::optional<ForwardCursor>();
    auto text = readWholeFile(path, 1U << 16U);
    if (!text)
        return text.error();
    const auto json = nlohmann::json::parse(*text, nullptr, false);
    if (json.is_discarded() || !json.is_object())
        return cursorUnreadable(path, "not a JSON object");
    if (json.value("format", std::string()) != kForwardCursorFormat)
        return cursorUnreadable(path, "another format");
    const auto number = [&](const char* name) -> std::optional<std::uint64_t> {
        if (!json.contains(name) || !json[name].is_number_unsigned())
            return std::nullopt;
        return json[name].get<std::uint64_t>();
    };
    const auto text_of = [&](const char* name) -> std::optional<std::string> {
        if (!json.contains(name) || !json[name].is_string())
            return std::nullopt;
        return json[name].get<std::string>();
    };
    auto delivered = number("delivered");
    auto headSize = number("head_size");
    auto target = text_of("target");
    auto origin = text_of("origin");
    auto leaf = text_of("last_leaf_hash");
    if (!delivered || !headSize || !target || !origin || !leaf)
        return cursorUnreadable(path, "a field is missing or mistyped");
    return std::optional<ForwardCursor>(
        ForwardCursor{*target, *origin, *delivered, *leaf, *headSize});
}

Result<void> writeForwardCursor(const std::filesystem::path& path, const ForwardCursor& cursor)
{
    const nlohmann::json json{{"format", kForwardCursorFormat},
                              {"target", cursor.target},
                              {"origin", cursor.origin},
                              {"delivered", cursor.delivered},
                              {"last_leaf_hash", cursor.lastLeafHashHex},
                              {"head_size", cursor.headSize}};
    const auto text = json.dump(2) + "\n";
    return writeFileAtomically(
        path, std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()),
        AtomicFileSink::Overwrite::Allow);
}

DurableForwarder::DurableForwarder(std::unique_ptr<ForwardTarget> target, const AuditStore& source,
                                   std::filesystem::path cursorFile, std::string origin,
                                   SpoolOptions options)
    : target_(std::move(target))
    , source_(source)
    , cursorFile_(std::move(cursorFile))
    , origin_(std::move(origin))
    , options_(options)
{
}

Result<std::unique_ptr<DurableForwarder>>
DurableForwarder::start(std::unique_ptr<ForwardTarget> target, const AuditStore& source,
                        std::filesystem::path cursorFile, std::string origin, SpoolOptions options)
{
    auto cursor = readForwardCursor(cursorFile);
    if (!cursor)
        return cursor.error();
    std::unique_ptr<DurableForwarder> forwarder(new DurableForwarder(
        std::move(target), source, std::move(cursorFile), std::move(origin), options));
    forwarder->cursor_ = cursor->value_or(ForwardCursor{});
    forwarder->health_.target = forwarder->target_->describe();
    forwarder->health_.delivered = forwarder->cursor_.delivered;
    forwarder->health_.headSize = forwarder->cursor_.headSize;
    if (options.startThread)
        forwarder->thread_ = std::thread([raw = forwarder.get()] { raw->run(); });
    return forwarder;
}

DurableForwarder::~DurableForwarder()
{
    {
        const std::lock_guard lock(mutex_);
        stop_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable())
        thread_.join();
}

void DurableForwarder::committed(std::uint64_t entryCount) noexcept
{
    {
        const std::lock_guard lock(mutex_);
        woken_ = true;
        health_.logSize = std::max(health_.logSize, entryCount);
    }
    wake_.notify_one();
}

ForwardHealth DurableForwarder::health() const
{
    const std::lock_guard lock(mutex_);
    return health_;
}

bool DurableForwarder::waitDelivered(std::uint64_t count, std::chrono::milliseconds timeout,
                                     bool withHead)
{
    committed(count);
    std::unique_lock lock(mutex_);
    return progressed_.wait_for(lock, timeout, [&] {
        return health_.delivered >= count && (!withHead || health_.headSize >= count);
    });
}

void DurableForwarder::run()
{
    auto retry = options_.retryMin;
    bool failing = false;
    while (true) {
        {
            std::unique_lock lock(mutex_);
            if (failing)  // a commit does not cut the wait short: the target refused
                wake_.wait_for(lock, retry, [&] { return stop_; });
            else
                wake_.wait_for(lock, options_.poll, [&] { return stop_ || woken_; });
            if (stop_)
                return;
            woken_ = false;
        }
        failing = !pump();
        retry = failing ? std::min(options_.retryMax, retry * 2) : options_.retryMin;
    }
}

bool DurableForwarder::pump()
{
    auto done = checkCursor(cursor_);
    if (done)
        done = deliverFrom(cursor_);
    if (!done) {
        noteFailure(done.error());
        return false;
    }
    return true;
}

// The cursor must be this target's and this log's: another target gets everything from entry 0,
// and so does one whose log is not the one it was fed from (a restored or rolled back data
// directory: the target then holds two entries under one sequence, which its checker shows).
Result<void> DurableForwarder::checkCursor(ForwardCursor& cursor)
{
    auto count = source_.entryCount();
    if (!count)
        return count.error();
    {
        const std::lock_guard lock(mutex_);
        health_.logSize = *count;
    }
    std::string why;
    if (cursor.target != target_->describe() || cursor.origin != origin_) {
        if (cursor.delivered > 0 || !cursor.target.empty())
            why = "the cursor is another target's";
    } else if (cursor.delivered > *count) {
        why =
            fmt::format("the log holds {} entries but {} were forwarded", *count, cursor.delivered);
    } else if (cursor.delivered > 0) {
        auto last = source_.readEntries(cursor.delivered - 1, 1);
        if (!last)
            return last.error();
        if (last->empty() || toHex(last->front().leafHash) != cursor.lastLeafHashHex)
            why = fmt::format("entry {} is not the one forwarded", cursor.delivered - 1);
    }
    const bool fresh = cursor.target.empty();
    if (why.empty() && !fresh)
        return success();
    if (!why.empty()) {
        log::warn("audit",
                  "the audit forward target gets every entry again from entry 0: the log is not "
                  "the one it was fed from, or the target changed",
                  {{"target", target_->describe()}, {"why", why}});
        const std::lock_guard lock(mutex_);
        ++health_.restarts;
    }
    cursor = ForwardCursor{target_->describe(), origin_, 0, {}, 0};
    const std::lock_guard lock(mutex_);
    health_.delivered = 0;
    health_.headSize = 0;
    return success();
}

// Batches of entries from the cursor on, each followed by the newest signed head when the
// entries delivered by then cover it; the cursor is written after each batch the target took.
Result<void> DurableForwarder::deliverFrom(ForwardCursor& cursor)
{
    while (true) {
        auto count = source_.entryCount();
        if (!count)
            return count.error();
        std::vector<ForwardLine> lines;
        std::size_t bytes = 0;
        std::uint64_t next = cursor.delivered;
        std::string lastLeaf = cursor.lastLeafHashHex;
        if (next < *count) {
            auto entries = source_.readEntries(
                next, std::min<std::uint64_t>(options_.batchEntries, *count - next));
            if (!entries)
                return entries.error();
            for (const auto& stored : *entries) {
                if (stored.sequence != next || (bytes >= options_.batchBytes && !lines.empty()))
                    break;
                auto text = forwardedEntryLine(origin_, stored);
                auto entry = decodeEntry(stored.bytes);
                if (!text || !entry)
                    return Error(ErrorCode::Integrity,
                                 fmt::format("Audit entry {} does not decode, so it can not be "
                                             "forwarded; run sealtrainctl audit verify.",
                                             stored.sequence));
                bytes += text->size();
                lastLeaf = toHex(stored.leafHash);
                lines.push_back({std::move(*text), "entry", stored.sequence, lastLeaf,
                                 static_cast<std::int64_t>(entry->timeNs)});
                ++next;
            }
        }
        std::uint64_t headSize = cursor.headSize;
        auto note = source_.readNewestHead();
        if (!note)
            return note.error();
        if (!note->empty()) {
            auto signedNote = parseSignedNote(*note);
            auto head = signedNote ? parseTreeHeadText(signedNote->text)
                                   : Result<TreeHead>(signedNote.error());
            if (head && head->size > cursor.headSize && head->size <= next) {
                auto text = forwardedHeadLine(origin_, *note);
                if (text) {
                    lines.push_back(
                        {std::move(*text), "head", head->size, {}, head->timeSeconds * 1000000000});
                    headSize = head->size;
                }
            }
        }
        {
            const std::lock_guard lock(mutex_);
            health_.logSize = std::max(health_.logSize, *count);
        }
        if (lines.empty())
            return success();
        SEALTRAIN_TRY(target_->deliver(lines));
        cursor.delivered = next;
        cursor.lastLeafHashHex = lastLeaf;
        cursor.headSize = headSize;
        if (auto written = writeForwardCursor(cursorFile_, cursor); !written)
            return Error(ErrorCode::Io,
                         fmt::format("The target took the lines but the forward cursor was not "
                                     "written, so they are sent again: {}",
                                     written.error().message()));
        noteSuccess(cursor);
    }
}

void DurableForwarder::noteFailure(const Error& error)
{
    bool first = false;
    {
        const std::lock_guard lock(mutex_);
        first = health_.lastError.empty();
        health_.lastError = error.message();
        ++health_.failures;
        if (!health_.failingSinceUnix)
            health_.failingSinceUnix = unixNow();
    }
    if (first)
        log::warn("audit",
                  "the audit forward target refused lines; they wait in the signed log and are "
                  "retried",
                  {{"target", target_->describe()}, {"error", error.message()}});
}

void DurableForwarder::noteSuccess(const ForwardCursor& cursor)
{
    bool recovered = false;
    {
        const std::lock_guard lock(mutex_);
        recovered = !health_.lastError.empty();
        health_.delivered = cursor.delivered;
        health_.headSize = cursor.headSize;
        health_.lastDeliveryUnix = unixNow();
        health_.lastError.clear();
        health_.failingSinceUnix.reset();
    }
    progressed_.notify_all();
    if (recovered)
        log::info("audit", "the audit forward target takes lines again",
                  {{"target", target_->describe()}});
}

}  // namespace sealtrain::audit
