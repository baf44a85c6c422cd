// Error codes to gRPC status codes and back (status.h).
#include "status.h"

#include <fmt/format.h>

#include <string>

namespace sealtrain::api::Internal {
namespace {

// gRPC's own messages are not our sentences: strip a trailing full stop and fold line breaks, so
// they fit inside one.
std::string clause(std::string_view text)
{
    std::string out(text);
    for (char& c : out)
        if (c == '\n' || c == '\r')
            c = ' ';
    while (!out.empty() && (out.back() == '.' || out.back() == ' '))
        out.pop_back();
    return out.empty() ? std::string("no detail") : out;
}

}  // namespace

grpc::Status toStatus(const Error& error)
{
    grpc::StatusCode code = grpc::StatusCode::UNKNOWN;
    switch (error.code()) {
    case ErrorCode::InvalidArgument: code = grpc::StatusCode::INVALID_ARGUMENT; break;
    case ErrorCode::NotFound: code = grpc::StatusCode::NOT_FOUND; break;
    case ErrorCode::AlreadyExists: code = grpc::StatusCode::ALREADY_EXISTS; break;
    case ErrorCode::PermissionDenied: code = grpc::StatusCode::PERMISSION_DENIED; break;
    case ErrorCode::FailedPrecondition: code = grpc::StatusCode::FAILED_PRECONDITION; break;
    case ErrorCode::Unauthenticated: code = grpc::StatusCode::UNAUTHENTICATED; break;
    case ErrorCode::Integrity: code = grpc::StatusCode::DATA_LOSS; break;
    case ErrorCode::Unsupported: code = grpc::StatusCode::UNIMPLEMENTED; break;
    case ErrorCode::ResourceExhausted: code = grpc::StatusCode::RESOURCE_EXHAUSTED; break;
    // The server's own disk or files (Io) are INTERNAL like its bugs: the caller can do nothing
    // about either, and Io must not read as the control plane being unreachable (UNAVAILABLE is
    // the client's for that).
    case ErrorCode::Io:
    case ErrorCode::Internal: code = grpc::StatusCode::INTERNAL; break;
    }
    return {code, error.message()};
}

Error fromStatus(const grpc::Status& status, std::string_view address)
{
    switch (status.error_code()) {
    case grpc::StatusCode::INVALID_ARGUMENT:
        return {ErrorCode::InvalidArgument, status.error_message()};
    case grpc::StatusCode::NOT_FOUND: return {ErrorCode::NotFound, status.error_message()};
    case grpc::StatusCode::ALREADY_EXISTS:
        return {ErrorCode::AlreadyExists, status.error_message()};
    case grpc::StatusCode::PERMISSION_DENIED:
        return {ErrorCode::PermissionDenied, status.error_message()};
    case grpc::StatusCode::FAILED_PRECONDITION:
        return {ErrorCode::FailedPrecondition, status.error_message()};
    case grpc::StatusCode::UNAUTHENTICATED:
        return {ErrorCode::Unauthenticated, status.error_message()};
    case grpc::StatusCode::DATA_LOSS: return {ErrorCode::Integrity, status.error_message()};
    case grpc::StatusCode::UNIMPLEMENTED: return {ErrorCode::Unsupported, status.error_message()};
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
        return {ErrorCode::ResourceExhausted, status.error_message()};
    case grpc::StatusCode::INTERNAL: return {ErrorCode::Internal, status.error_message()};
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::DEADLINE_EXCEEDED:
        return {ErrorCode::Io,
                fmt::format("Cannot reach the control plane at '{}' ({}); check that "
                            "sealtrain-control runs there, that this client trusts its CA and "
                            "that its certificate is valid.",
                            address, clause(status.error_message()))};
    default:
        return {ErrorCode::Internal,
                fmt::format("The control plane at '{}' answered with an unexpected error ({}); "
                            "check both sides' versions and logs.",
                            address, clause(status.error_message()))};
    }
}

}  // namespace sealtrain::api::Internal
