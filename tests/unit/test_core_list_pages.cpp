// The small lists in pages (core/store/list_page.h, KeyedPage; issue #29): users, roles and
// datasets read page by page give each item once and in the list's own order, a page goes on from
// the right place after items were added before or after it, and a page out of bounds is refused
// after the caller and audited. Workers and keys page the same way (test_api_worker_calls).
#include "service_world.h"

#include "sealtrain/core/access/access.h"
#include "sealtrain/core/datasets/datasets.h"
#include "sealtrain/core/identity/identity.h"
#include "sealtrain/core/store/list_page.h"

#include <QtTest/QtTest>

#include <functional>
#include <string>
#include <vector>

using namespace sealtrain;

namespace {

// Every page of `limit` items, following nextAfter: the keys, in order.
template <typename Item>
std::vector<std::string>
keysPageByPage(const std::function<Result<core::KeyedPaged<Item>>(const core::KeyedPage&)>& list,
               std::uint32_t limit)
{
    std::vector<std::string> keys;
    core::KeyedPage page{"", limit};
    for (int pages = 0; pages < 100; ++pages) {
        auto got = list(page);
        if (!got)
            qFatal("a page failed: %s", got.error().message().c_str());
        if (got->size() > limit)
            qFatal("a page held more than its limit");
        for (const Item& item : *got)
            keys.push_back(core::pageKey(item));
        if (got->nextAfter.empty())
            return keys;
        page.after = got->nextAfter;
    }
    qFatal("more than 100 pages");
}

template <typename Item>
std::vector<std::string> keysOf(const core::KeyedPaged<Item>& whole)
{
    std::vector<std::string> keys;
    for (const Item& item : whole)
        keys.push_back(core::pageKey(item));
    return keys;
}

bool strictlyAscending(const std::vector<std::string>& keys)
{
    return std::adjacent_find(keys.begin(), keys.end(), std::greater_equal<>()) == keys.end();
}

}  // namespace

class TestListPages : public QObject {
    Q_OBJECT

private slots:
    void usersRolesAndDatasetsComeInPages()
    {
        testing::ServiceWorld w;
        for (const std::string name : {"zed", "amy", "kim", "bo"})
            w.addUser(name, "engineer");
        auto& identity = w.t.plane->identity();
        auto& access = w.t.plane->access();
        for (const std::string role : {"labeller", "reviewer"})
            QVERIFY(access.createRole(w.admin, role, {"dataset.read"}));
        w.addUser("stew", "steward");
        const auto steward = w.session("stew");
        const crypto::Kek kek{"datasets", 1, crypto::SecretBytes::random(32).value()};
        int imported = 0;
        for (const std::string name : {"notes", "alpha", "notes", "beta", "notes"})
            testing::importTextDataset(w.t, steward, name, "internal",
                                       "import " + std::to_string(++imported) + "\n\ntwo\n", kek);

        const std::function<Result<core::KeyedPaged<core::UserInfo>>(const core::KeyedPage&)>
            users = [&](const core::KeyedPage& page) { return identity.listUsers(w.admin, page); };
        const auto allUsers = users({"", core::kMaxListPage});
        QVERIFY(allUsers);
        QCOMPARE(allUsers->size(), std::size_t{9});  // alice, three role users, four, stew
        QVERIFY(allUsers->nextAfter.empty());
        QVERIFY(strictlyAscending(keysOf(*allUsers)));
        for (const std::uint32_t limit : {1U, 2U, 4U, 9U})
            QCOMPARE(keysPageByPage(users, limit), keysOf(*allUsers));

        const std::function<Result<core::KeyedPaged<core::RoleInfo>>(const core::KeyedPage&)>
            roles = [&](const core::KeyedPage& page) { return access.listRoles(w.admin, page); };
        const auto allRoles = roles({});
        QVERIFY(allRoles);
        QVERIFY(allRoles->front().builtin);
        QVERIFY(!allRoles->back().builtin);
        QVERIFY(strictlyAscending(keysOf(*allRoles)));
        QCOMPARE(keysPageByPage(roles, 2), keysOf(*allRoles));

        const std::function<Result<core::KeyedPaged<core::DatasetInfo>>(const core::KeyedPage&)>
            datasets = [&](const core::KeyedPage& page) {
                return w.t.plane->datasets().list(steward, page);
            };
        const auto allDatasets = datasets({});
        QVERIFY(allDatasets);
        QCOMPARE(allDatasets->size(), std::size_t{5});
        QCOMPARE((*allDatasets)[1].name, std::string("beta"));
        QCOMPARE((*allDatasets)[2].version, std::int64_t{3});  // notes, newest first
        QVERIFY(strictlyAscending(keysOf(*allDatasets)));
        QCOMPARE(keysPageByPage(datasets, 1), keysOf(*allDatasets));
        QCOMPARE(keysPageByPage(datasets, 2), keysOf(*allDatasets));
    }

    // A page goes on after the previous page's last key, whatever was added or removed since:
    // no item twice, none that was there from the start left out.
    void aPageGoesOnAfterChanges()
    {
        testing::ServiceWorld w;
        for (const std::string name : {"dan", "eve", "fay", "gus"})
            w.addUser(name, "engineer");
        auto& identity = w.t.plane->identity();
        auto first = identity.listUsers(w.admin, {"", 3});
        QVERIFY(first);
        QCOMPARE(first->size(), std::size_t{3});
        const std::string cursor = first->nextAfter;
        QCOMPARE(cursor, first->back().name);
        w.addUser("aaron", "engineer");  // before the cursor: not on a later page
        w.addUser("zoe", "engineer");    // after it: on a later page
        std::vector<std::string> names;
        for (const auto& user : *first)
            names.push_back(user.name);
        core::KeyedPage page{cursor, 3};
        for (;;) {
            auto next = identity.listUsers(w.admin, page);
            QVERIFY(next);
            for (const auto& user : *next)
                names.push_back(user.name);
            if (next->nextAfter.empty())
                break;
            page.after = next->nextAfter;
        }
        QVERIFY(strictlyAscending(names));
        QVERIFY(std::find(names.begin(), names.end(), "zoe") != names.end());
        QVERIFY(std::find(names.begin(), names.end(), "aaron") == names.end());
        QCOMPARE(names.size(), std::size_t{1 + 3 + 4 + 1});  // all but aaron
    }

    void pagesOutOfBoundsAreRefusedAndAudited()
    {
        testing::ServiceWorld w;
        auto& identity = w.t.plane->identity();
        for (const core::KeyedPage& page :
             {core::KeyedPage{"", 0}, core::KeyedPage{"", core::kMaxListPage + 1},
              core::KeyedPage{std::string(core::kMaxPageKeyBytes + 1, 'a'), 10}}) {
            auto refused = identity.listUsers(w.admin, page);
            QVERIFY(!refused);
            QCOMPARE(refused.error().code(), ErrorCode::InvalidArgument);
            QCOMPARE(w.last().action, std::string("user.list"));
            QCOMPARE(w.last().outcome, audit::Outcome::Failed);
        }
        // The caller before the page: an engineer's bad page is a refusal for the caller.
        auto engineer = identity.listUsers(w.session("engineer-user"), {"", 0});
        QCOMPARE(engineer.error().code(), ErrorCode::PermissionDenied);
        QCOMPARE(w.last().outcome, audit::Outcome::Denied);
        // A good page records where it started.
        QVERIFY(identity.listUsers(w.admin, {"bob", 5}));
        QCOMPARE(testing::detailOf(w.last(), "after"), std::string("bob"));
    }
};

QTEST_GUILESS_MAIN(TestListPages)
#include "test_core_list_pages.moc"
