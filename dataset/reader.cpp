// DatasetReader and verifyDataset (reader.h).
#include "sealtrain/dataset/reader.h"

#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/chunked.h"
#include "sealtrain/crypto/hash.h"
#include "sealtrain/crypto/sealed.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>

namespace sealtrain::dataset {

namespace {

constexpr std::uint64_t kGolden = 0x9E3779B97F4A7C15ULL;

std::uint64_t splitMix64(std::uint64_t& state)
{
    state += kGolden;
    std::uint64_t z = state;
    z = (z ^ (z >> 30U)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27U)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31U);
}

Error shardError(const std::string& file, const std::string& what)
{
    return {ErrorCode::Integrity,
            "The shard '" + file + "' " + what + "; restore the dataset from a trusted copy."};
}

// One opened shard: its file and its sealed reader.
struct OpenShard {
    std::unique_ptr<FileSource> source;
    std::optional<crypto::SealedReader> reader;
    std::uint64_t firstToken = 0;
    std::uint64_t tokens = 0;
};

// Checks that the sealed object at `path` is the shard `entry` of `split` and opens it.
Result<OpenShard> openShard(const std::filesystem::path& folder, const Manifest& manifest,
                            Split split, std::uint64_t index, const crypto::KekResolver& resolver,
                            const crypto::DataKeyResolver* dataKeys = nullptr)
{
    const ShardEntry& entry = manifest.split(split).shards[index];
    auto source = FileSource::open(folder / entry.file);
    if (!source)
        return source.error();
    auto info = crypto::inspectSealedObject(**source);
    if (!info)
        return info.error().withContext("Shard '" + entry.file + "'");
    if (toHex(info->objectId) != entry.objectId)
        return shardError(entry.file, "belongs to another dataset (its object id is not the one "
                                      "the manifest lists)");
    if (info->metadata.contentType != kShardContentType
        || info->metadata.metadata != shardMetadata(split, index, manifest.tokenBytes))
        return shardError(entry.file, "is not the token shard the manifest lists at this place");
    auto reader = dataKeys != nullptr ? crypto::SealedReader::open(**source, *dataKeys)
                                      : crypto::SealedReader::open(**source, resolver);
    if (!reader && dataKeys != nullptr)
        return reader.error().withContext("Cannot open the shard '" + entry.file + "'");
    if (!reader && reader.error().code() == ErrorCode::Unauthenticated)
        return Error(
            ErrorCode::Unauthenticated,
            "The shard '" + entry.file
                + "' can not be decrypted with this keyring's datasets key (the key is "
                  "wrong or the shard's key block was altered); unlock the keyring the "
                  "dataset was imported with, or restore the dataset from a trusted copy.");
    if (!reader)
        return reader.error().withContext("Cannot open the shard '" + entry.file + "'");
    if (reader->plaintextSize() != entry.tokens * manifest.tokenBytes)
        return shardError(entry.file, "holds a different number of tokens than the manifest says");
    OpenShard shard;
    shard.source = std::move(source).value();
    shard.reader.emplace(std::move(reader).value());
    shard.tokens = entry.tokens;
    return shard;
}

}  // namespace

std::vector<std::uint64_t> epochOrder(std::uint64_t sequenceCount, std::uint64_t seed,
                                      std::uint64_t epoch, bool shuffle)
{
    std::vector<std::uint64_t> order(sequenceCount);
    for (std::uint64_t i = 0; i < sequenceCount; ++i)
        order[i] = i;
    if (!shuffle || sequenceCount < 2)
        return order;
    // Fisher-Yates driven by SplitMix64 from seed XOR (epoch + 1) * golden ratio.
    std::uint64_t state = seed ^ ((epoch + 1) * kGolden);
    for (std::uint64_t i = sequenceCount - 1; i > 0; --i) {
        const std::uint64_t j = splitMix64(state) % (i + 1);
        std::swap(order[i], order[j]);
    }
    return order;
}

struct DatasetReader::State {
    Manifest manifest;
    std::string id;
    ReaderOptions options;
    std::vector<OpenShard> shards;
    std::uint64_t splitTokens = 0;
    std::uint64_t sequences = 0;
    std::uint64_t rankSequences = 0;

    // Chunk cache: the last decrypted chunk of each shard.
    struct CachedChunk {
        std::size_t shard = SIZE_MAX;
        std::uint64_t chunk = UINT64_MAX;
        std::vector<std::uint8_t> bytes;
        std::size_t size = 0;
    };
    std::vector<CachedChunk> cache;
    std::mutex readMutex;  // guards shards and cache

    // Producer side.
    std::uint64_t orderEpoch = UINT64_MAX;
    std::vector<std::uint64_t> order;
    ReaderPosition produce;

    // Queue between the prefetch thread and next().
    std::mutex queueMutex;
    std::condition_variable queueChanged;
    std::deque<Result<Batch>> queue;
    bool stop = false;
    std::thread worker;
    ReaderPosition consumed;

    Result<void> readTokens(std::uint64_t first, std::size_t count, std::int32_t* out)
    {
        const std::uint32_t width = manifest.tokenBytes;
        while (count > 0) {
            const auto found = std::upper_bound(
                shards.begin(), shards.end(), first,
                [](std::uint64_t token, const OpenShard& s) { return token < s.firstToken; });
            const auto shardIndex = static_cast<std::size_t>(found - shards.begin()) - 1;
            OpenShard& shard = shards[shardIndex];
            const std::uint64_t byte = (first - shard.firstToken) * width;
            const std::uint64_t chunk = byte / crypto::kChunkSize;
            CachedChunk& cached = cache[shardIndex];
            if (cached.chunk != chunk) {
                cached.bytes.resize(crypto::kChunkSize);
                cached.chunk = UINT64_MAX;
                auto got = shard.reader->readChunk(chunk, cached.bytes);
                if (!got)
                    return got.error().withContext(
                        "Cannot read the shard '"
                        + manifest.split(options.split).shards[shardIndex].file + "'");
                cached.size = *got;
                cached.chunk = chunk;
            }
            const std::uint64_t within = byte - chunk * crypto::kChunkSize;
            const auto available = static_cast<std::size_t>((cached.size - within) / width);
            const std::size_t take = std::min(count, available);
            const std::uint8_t* in = cached.bytes.data() + within;
            if (width == 2) {
                for (std::size_t i = 0; i < take; ++i, in += 2)
                    out[i] = static_cast<std::int32_t>(in[0] | (in[1] << 8U));
            } else {
                for (std::size_t i = 0; i < take; ++i, in += 4)
                    out[i] =
                        static_cast<std::int32_t>(static_cast<std::uint32_t>(in[0])
                                                  | (static_cast<std::uint32_t>(in[1]) << 8U)
                                                  | (static_cast<std::uint32_t>(in[2]) << 16U)
                                                  | (static_cast<std::uint32_t>(in[3]) << 24U));
            }
            out += take;
            first += take;
            count -= take;
        }
        return success();
    }

    std::uint64_t rankShare(std::uint64_t count) const
    {
        const std::uint64_t w = options.worldSize;
        const std::uint64_t r = options.rank;
        return count > r ? (count - r + w - 1) / w : 0;
    }

    Result<Batch> makeBatch()
    {
        if (rankSequences == 0)
            return Error(ErrorCode::InvalidArgument,
                         "This rank's share of the split holds no sequence; use a shorter context, "
                         "fewer ranks or a larger dataset.");
        if (produce.index >= rankSequences)
            produce = {produce.epoch + 1, 0};
        if (orderEpoch != produce.epoch) {
            order = epochOrder(sequences, options.seed, produce.epoch, options.shuffle);
            orderEpoch = produce.epoch;
        }
        Batch batch;
        batch.position = produce;
        batch.sequences = static_cast<std::size_t>(
            std::min<std::uint64_t>(options.batchSize, rankSequences - produce.index));
        const std::size_t context = options.context;
        batch.inputs.resize(batch.sequences * context);
        batch.targets.resize(batch.sequences * context);
        std::vector<std::int32_t> tokens(context + 1);
        std::lock_guard lock(readMutex);
        for (std::size_t s = 0; s < batch.sequences; ++s) {
            const std::uint64_t position = options.rank + (produce.index + s) * options.worldSize;
            const std::uint64_t sequenceId = order[position];
            batch.sequenceIds.push_back(sequenceId);
            SEALTRAIN_TRY(readTokens(sequenceId * context, context + 1, tokens.data()));
            std::copy(tokens.begin(), tokens.end() - 1,
                      batch.inputs.begin() + static_cast<std::ptrdiff_t>(s * context));
            std::copy(tokens.begin() + 1, tokens.end(),
                      batch.targets.begin() + static_cast<std::ptrdiff_t>(s * context));
        }
        produce.index += batch.sequences;
        return batch;
    }

    void run()
    {
        for (;;) {
            {
                std::unique_lock lock(queueMutex);
                queueChanged.wait(lock,
                                  [&] { return stop || queue.size() < options.prefetchBatches; });
                if (stop)
                    return;
            }
            auto batch = makeBatch();
            const bool failed = !batch.ok();
            {
                std::lock_guard lock(queueMutex);
                queue.push_back(std::move(batch));
            }
            queueChanged.notify_all();
            if (failed)
                return;
        }
    }

    void startWorker()
    {
        if (options.prefetchBatches == 0)
            return;
        stop = false;
        worker = std::thread([this] { run(); });
    }

    void stopWorker()
    {
        if (!worker.joinable())
            return;
        {
            std::lock_guard lock(queueMutex);
            stop = true;
        }
        queueChanged.notify_all();
        worker.join();
        queue.clear();
    }
};

DatasetReader::DatasetReader(std::unique_ptr<State> state)
    : state_(std::move(state))
{
}

DatasetReader::~DatasetReader()
{
    state_->stopWorker();
}

Result<std::unique_ptr<DatasetReader>> DatasetReader::open(const std::filesystem::path& folder,
                                                           const std::string& expectedId,
                                                           const crypto::KekResolver& resolver,
                                                           const ReaderOptions& options)
{
    if (options.context == 0 || options.batchSize == 0 || options.worldSize == 0
        || options.rank >= options.worldSize)
        return Error(ErrorCode::InvalidArgument,
                     "The reader needs a positive context and batch size and a rank below the "
                     "world size.");
    auto manifest = loadManifest(folder, expectedId);
    if (!manifest)
        return manifest.error();
    if (options.signer != nullptr)
        SEALTRAIN_TRY(verifyManifestSignature(folder, *options.signer));
    auto state = std::make_unique<State>();
    state->manifest = std::move(manifest).value();
    state->id = state->manifest.id();
    state->options = options;
    const SplitEntry& split = state->manifest.split(options.split);
    for (std::uint64_t i = 0; i < split.shards.size(); ++i) {
        auto shard =
            openShard(folder, state->manifest, options.split, i, resolver, options.dataKeys);
        if (!shard)
            return shard.error();
        shard->firstToken = state->splitTokens;
        state->splitTokens += shard->tokens;
        state->shards.push_back(std::move(shard).value());
    }
    if (state->splitTokens != split.tokens)
        return Error(ErrorCode::Integrity, "The dataset manifest's token count does not match its "
                                           "shards; restore the dataset from a trusted copy.");
    state->cache.resize(state->shards.size());
    state->sequences =
        state->splitTokens > options.context ? (state->splitTokens - 1) / options.context : 0;
    state->rankSequences = state->rankShare(state->sequences);
    auto reader = std::unique_ptr<DatasetReader>(new DatasetReader(std::move(state)));
    reader->state_->startWorker();
    return reader;
}

const Manifest& DatasetReader::manifest() const noexcept
{
    return state_->manifest;
}
const std::string& DatasetReader::datasetId() const noexcept
{
    return state_->id;
}
std::uint64_t DatasetReader::sequenceCount() const noexcept
{
    return state_->sequences;
}
std::uint64_t DatasetReader::sequencesForRank() const noexcept
{
    return state_->rankSequences;
}
std::uint64_t DatasetReader::batchesPerEpoch() const noexcept
{
    return (state_->rankSequences + state_->options.batchSize - 1) / state_->options.batchSize;
}

ReaderPosition DatasetReader::position() const noexcept
{
    return state_->consumed;
}

Result<Batch> DatasetReader::next()
{
    State& s = *state_;
    Result<Batch> batch = Error(ErrorCode::Internal, "No batch was made.");
    if (s.options.prefetchBatches == 0) {
        batch = s.makeBatch();
    } else {
        std::unique_lock lock(s.queueMutex);
        s.queueChanged.wait(lock, [&] { return !s.queue.empty(); });
        batch = std::move(s.queue.front());
        if (batch.ok())
            s.queue.pop_front();  // an error stays, so every later call reports it too
        lock.unlock();
        s.queueChanged.notify_all();
    }
    if (batch.ok())
        s.consumed = {batch->position.epoch, batch->position.index + batch->sequences};
    return batch;
}

Result<void> DatasetReader::seek(ReaderPosition position)
{
    State& s = *state_;
    if (position.index > s.rankSequences)
        return Error(ErrorCode::InvalidArgument,
                     "The saved reader position lies past the end of its epoch; it belongs to "
                     "another dataset or reader configuration.");
    s.stopWorker();
    s.produce = position;
    s.consumed = position;
    s.startWorker();
    return success();
}

Result<std::vector<std::int32_t>> DatasetReader::sequence(std::uint64_t id)
{
    State& s = *state_;
    if (id >= s.sequences)
        return Error(ErrorCode::InvalidArgument,
                     "The sequence number is past the end of the split.");
    std::vector<std::int32_t> tokens(s.options.context + 1);
    std::lock_guard lock(s.readMutex);
    SEALTRAIN_TRY(s.readTokens(id * s.options.context, tokens.size(), tokens.data()));
    return tokens;
}

Result<VerifyReport> verifyDataset(const std::filesystem::path& folder,
                                   const std::string& expectedId,
                                   const crypto::KekResolver* resolver,
                                   const crypto::PublicKey* signer)
{
    auto manifest = loadManifest(folder, expectedId);
    if (!manifest)
        return manifest.error();
    VerifyReport report;
    if (signer != nullptr) {
        SEALTRAIN_TRY(verifyManifestSignature(folder, *signer));
        report.signatureChecked = true;
    }
    report.manifest = std::move(manifest).value();
    report.datasetId = report.manifest.id();
    std::vector<std::uint8_t> chunk(crypto::kChunkSize);
    for (const Split split : {Split::Train, Split::Validation}) {
        const SplitEntry& entry = report.manifest.split(split);
        for (std::uint64_t i = 0; i < entry.shards.size(); ++i) {
            const ShardEntry& shard = entry.shards[i];
            auto source = FileSource::open(folder / shard.file);
            if (!source)
                return source.error();
            auto info = crypto::inspectSealedObject(**source);
            if (!info)
                return info.error().withContext("Shard '" + shard.file + "'");
            crypto::Sha256 hash;
            std::vector<std::uint8_t> block(std::size_t{1} << 20U);
            for (const auto& [offset, length] :
                 {std::pair{std::uint64_t{0}, info->headerSize},
                  std::pair{info->payloadOffset, info->payloadSize}}) {
                for (std::uint64_t done = 0; done < length;) {
                    const auto take = static_cast<std::size_t>(
                        std::min<std::uint64_t>(length - done, block.size()));
                    SEALTRAIN_TRY((*source)->readAt(offset + done, {block.data(), take}));
                    hash.update({block.data(), take});
                    done += take;
                }
            }
            if (toHex(info->objectId) != shard.objectId)
                return shardError(shard.file, "belongs to another dataset (its object id is not "
                                              "the one the manifest lists)");
            if (toHex(hash.finish()) != shard.sha256)
                return shardError(shard.file, "does not match the SHA-256 the manifest lists (it "
                                              "was altered or replaced)");
            if (resolver != nullptr) {
                auto opened = openShard(folder, report.manifest, split, i, *resolver);
                if (!opened)
                    return opened.error();
                for (std::uint64_t c = 0; c < opened->reader->chunkCount(); ++c) {
                    auto got = opened->reader->readChunk(c, chunk);
                    if (!got)
                        return got.error().withContext("Cannot read the shard '" + shard.file
                                                       + "'");
                }
                report.tokensChecked += shard.tokens;
            }
            ++report.shardsChecked;
        }
    }
    return report;
}

}  // namespace sealtrain::dataset
