// Errors across the wire (docs/api.md, "Errors"): each of Sealtrain's error codes has one gRPC
// status code, and the message is our one sentence, unchanged. The client maps a status back,
// and words the transport's own failures (no server, TLS refused) as one sentence too.
#pragma once

#include "sealtrain/base/result.h"

#include <grpcpp/support/status.h>

#include <string_view>

namespace sealtrain::api::Internal {

[[nodiscard]] grpc::Status toStatus(const Error& error);
// `address` names the server in transport failures.
[[nodiscard]] Error fromStatus(const grpc::Status& status, std::string_view address);

}  // namespace sealtrain::api::Internal
