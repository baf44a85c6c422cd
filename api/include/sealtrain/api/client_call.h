// What every handle of the client library shares (client.h, and one header per service beside its
// views: jobs_client.h, datasets_client.h, …): where the control plane is and the client's
// credential, paged lists, cancelling a long call, the files an upload reads, and a change that may
// wait for a second admin. No gRPC type crosses this header.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/crypto/secret_bytes.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <iterator>
#include <mutex>
#include <string>
#include <vector>

namespace sealtrain::api {

namespace client_internal {
class CancelScope;
// The channel and its stubs, which every handle shares (api/client_state.h).
struct ClientState;

// What each service's handle holds: the client's shared state, which outlives it.
class Handle {
public:
    explicit Handle(ClientState& state) noexcept
        : state_(&state)
    {
    }

protected:
    ClientState* state_;
};
}  // namespace client_internal

// Where the control plane is and whom to trust there.
struct Endpoint {
    std::string address;                   // "unix:/path" or "host:port"
    std::string serverName = "localhost";  // a name the server's certificate must carry
    std::string caCertificatePem;          // the platform CA (pinned at connect)
    // Keepalive pings (docs/api.md, "Transport"), for a long-lived client such as
    // sealtrain-worker. Off for one-shot commands: the ping timer can outlive a process that
    // exits right after its call, before gRPC has freed the connection.
    bool keepalive = false;
};

// A signed-in client's credential: its own key and the certificate the control plane issued
// for it. The key never leaves the client.
struct ClientIdentity {
    crypto::SecretBytes privateKeyPem;
    std::string certificatePem;
};

// What a change that may wait for a second admin did: `pending`, it waits for another admin's
// same call (docs/operations/access-control.md).
struct ChangeResult {
    bool pending = false;
};

// One file to upload: read from `path`, named `name` in the manifest and report.
struct UploadFile {
    std::filesystem::path path;
    std::string name;
    std::uint64_t size = 0;
};

// Bytes sent so far of the total; called as the upload goes and once at its end.
using UploadProgress = std::function<void(std::uint64_t sent, std::uint64_t total)>;

// One page of a list that grows without bound (sessions, jobs), newest first.
template <typename Item>
struct Page {
    std::vector<Item> items;
    std::int64_t nextBefore = 0;  // where the next page starts; 0: no more
};

// Every item of a paged list: `page(before)` from the newest until a page says there is no
// more; Internal when a page does not move on (a server's bug), rather than a loop.
template <typename Item, typename PageCall>
[[nodiscard]] Result<std::vector<Item>> allPages(const PageCall& page)
{
    std::vector<Item> all;
    std::int64_t before = 0;
    for (;;) {
        Result<Page<Item>> got = page(before);
        if (!got)
            return got.error();
        all.insert(all.end(), std::make_move_iterator(got->items.begin()),
                   std::make_move_iterator(got->items.end()));
        if (got->nextBefore == 0)
            return all;
        if (before != 0 && got->nextBefore >= before)
            return Error(ErrorCode::Internal,
                         "The control plane sent a page that does not move on; report this bug.");
        before = got->nextBefore;
    }
}

// Lets another thread end a long call at once (a watch blocks reading while its job is quiet;
// the GUI ends it when another job is chosen or the window closes). cancel() may come before,
// during or after the call; the call then returns what it had.
class CallCancel final {
public:
    void cancel();
    [[nodiscard]] bool cancelled() const;

private:
    friend class client_internal::CancelScope;
    // The running call's grpc::ClientContext (no gRPC type crosses this header).
    void attach(void* context);
    void detach();

    mutable std::mutex lock_;
    void* context_ = nullptr;
    bool cancelled_ = false;
};

}  // namespace sealtrain::api
