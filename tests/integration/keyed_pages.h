// Reading a small list's pages (store/list_page.h, KeyedPage) with the raw generated stubs, as an
// independent client would: for the tests of paging against a real sealtrain-control.
#pragma once

#include <grpcpp/grpcpp.h>

#include <QtGlobal>

#include <cstdint>
#include <string>
#include <vector>

namespace sealtrain::testing {

// Pages of one item, from after "" on and following next_after (at most 50): what `names`
// reads of each page's items, in order. Stops the test when a page fails, holds more than
// one item or does not move on.
template <typename Request, typename Reply, typename Call, typename Names>
std::vector<std::string> pageByPage(const Call& call, const Names& names)
{
    std::vector<std::string> all;
    Request request;
    request.set_limit(1);
    for (int pages = 0; pages < 50; ++pages) {
        grpc::ClientContext context;
        Reply reply;
        const grpc::Status status = call(&context, request, &reply);
        if (!status.ok())
            qFatal("a page failed: %s", status.error_message().c_str());
        const std::vector<std::string> page = names(reply);
        if (page.size() > 1)
            qFatal("a page of one held %zu items", page.size());
        all.insert(all.end(), page.begin(), page.end());
        if (reply.next_after().empty())
            return all;
        if (reply.next_after() <= request.after())
            qFatal("a page did not move on");
        request.set_after(reply.next_after());
    }
    qFatal("more than 50 pages of one");
}

// The status of a page that asks for `limit` items after `after`.
template <typename Request, typename Reply, typename Call>
grpc::StatusCode pageStatus(const Call& call, std::uint32_t limit, const std::string& after)
{
    grpc::ClientContext context;
    Request request;
    request.set_limit(limit);
    request.set_after(after);
    Reply reply;
    return call(&context, request, &reply).error_code();
}

}  // namespace sealtrain::testing
