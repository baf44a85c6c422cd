// Every call of the gRPC contract, read from the generated descriptors (so that a test over all
// of them can not leave a new one out), and one raw call of any of them with a hostile request
// (attacks.h), as a client that skips the client library would send it: for the tests that
// check every call's caller comes first and every refusal is audited (issues #27, #54).
#pragma once

#include "../support/attacks.h"

#include "sealtrain/v1/compliance.grpc.pb.h"
#include "sealtrain/v1/control.grpc.pb.h"
#include "sealtrain/v1/registry.grpc.pb.h"
#include "sealtrain/v1/runs.grpc.pb.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <QtGlobal>

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <vector>

namespace sealtrain::testing {

struct ContractMethod {
    std::string service;  // "Sessions"
    std::string method;   // "SignIn"
    std::string path;     // "/sealtrain.v1.Sessions/SignIn"
    const google::protobuf::Descriptor* input = nullptr;

    [[nodiscard]] std::string name() const { return service + "." + method; }
};

// Every method of every service of the contract's files (issue #30 added runs.proto and
// registry.proto, issue #31 compliance.proto); qFatal when a file is not linked in.
inline std::vector<ContractMethod> contractMethods()
{
    // Linked in, so that its descriptor is in the generated pool.
    (void)sealtrain::v1::ComplianceReportRequest::descriptor();
    std::vector<ContractMethod> methods;
    for (const char* name : {"sealtrain/v1/control.proto", "sealtrain/v1/runs.proto",
                             "sealtrain/v1/registry.proto", "sealtrain/v1/compliance.proto"}) {
        const auto* file = google::protobuf::DescriptorPool::generated_pool()->FindFileByName(name);
        if (file == nullptr)
            qFatal("%s is not linked in", name);
        for (int s = 0; s < file->service_count(); ++s) {
            const auto* service = file->service(s);
            for (int m = 0; m < service->method_count(); ++m) {
                const auto* method = service->method(m);
                methods.push_back({service->name(), method->name(),
                                   "/" + service->full_name() + "/" + method->name(),
                                   method->input_type()});
            }
        }
    }
    return methods;
}

// One call of `method` on `channel` with a request whose every field is hostile, as raw bytes;
// a stream sends that one message and closes. Its status (20 seconds at most).
inline grpc::Status callHostile(const std::shared_ptr<grpc::Channel>& channel,
                                const ContractMethod& method)
{
    grpc::GenericStub stub(channel);
    std::unique_ptr<google::protobuf::Message> request(
        google::protobuf::MessageFactory::generated_factory()->GetPrototype(method.input)->New());
    fillHostile(*request, 0);
    const std::string bytes = request->SerializeAsString();
    grpc::Slice slice(bytes);
    grpc::ByteBuffer sent(&slice, 1);
    grpc::ByteBuffer received;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    std::promise<grpc::Status> done;
    stub.UnaryCall(&context, method.path, grpc::StubOptions(), &sent, &received,
                   [&done](grpc::Status status) { done.set_value(std::move(status)); });
    return done.get_future().get();
}

}  // namespace sealtrain::testing
