"""Small patches that make moto 5.2.5's DynamoDB answer in time that does not
grow with the table, without changing what it answers.

Measured with go run ./infra/dev/load -scale (docs/measurements.md), three
things in moto grow with the whole table on every request:

1. Query, on the table or on a global secondary index, starts from
   Table.all_items(), which lists and sorts every item of the table, and then
   keeps those of the asked partition. Patched: Query starts from the asked
   partition only: the table's own partition, or, for a GSI, the items an
   index kept here (partition key values -> items) says are in it. The rest
   of moto's Query (sorting, paging, range conditions, filters, projections)
   runs unchanged on that smaller list, and it still checks every key
   condition on every item, so an index entry that went stale can only be
   skipped, never answered.
2. TransactWriteItems deep-copies every table it touches before it starts,
   to roll back on a failure (every item, and every stream record the table
   ever had). Patched: it saves a copy of the items the transaction names
   and the length of the tables' streams, and restores those on a failure.
   Its checks and writes are moto's own, one after the other, unchanged.
3. The request recorder (the state log the launcher replays at start) also
   logs every read, and logs each write with all its headers (the SDK's
   user agent, invocation id, signature and date: half of an entry) and its
   body in base64. Patched: it logs only requests that may change something,
   each with the headers its replay needs (Host, Content-Type, X-Amz-Target,
   and of Authorization the credential scope that names account, region and
   service) and a body that is UTF-8 text as it is: 5,000 hand-offs' log
   went from 46 MB to about half. The launcher replays both forms.

Two more cost every request time in proportion to its answer, or a constant
that dominates small requests:

4. The response serializer walks botocore's model for every attribute value
   of every item answered (a third of the emulator's time in the profile).
   An item in moto is already in DynamoDB's wire form ({"S": "..."}), which
   is what that walk produces for it. Patched: an AttributeValue in wire
   form (strings, numbers as strings, booleans, nulls, their sets, maps and
   lists; anything else, such as binary, takes moto's own walk) is written
   as it is.
5. Query deep-copies every item of the page it answers, to keep the stored
   items safe from what answering does to them; answering builds new items
   and dicts (projections, to_json) and changes none. Patched: while a
   narrowed Query runs, a page's items are copied one level (a new Item with
   a new attribute dict of the same values).
6. Every Item and stream record moto makes (a page's copies, projections)
   is appended to a class-wide list of instances and so never freed: the
   emulator's memory, and the garbage collector's passes over it, grow with
   every request (loading a snapshot of 5,000 tasks took 36 s). Patched:
   those two classes are not tracked (the list serves moto's data
   dashboard, which the local stack does not use).
7. A GSI with an INCLUDE or KEYS_ONLY projection projects every item it
   answers by turning the whole item into plain Python values and back, once
   per projected attribute (about 95% of a 100-item Query on Prickle's task
   indexes, since they project INCLUDE). Patched: an index projecting only
   top-level attribute names keeps those of the item's attributes as they
   are stored (numbers keep their stored text, sets their stored order, as
   moto's answers from the table itself do).
8. Query weighs every item it reads twice (Item.size, a walk of all its
   values) to stop at 1 MB: a third of a 100-item page once 7 was patched.
   Patched: while a narrowed Query runs, an item's size is computed once
   (nothing changes an item during a Query: requests run one at a time).
9. Every request lists its handler class's methods with inspect.getmembers,
   and lists moto's package directory (os.listdir and a stat per service,
   twice) to find the backend for its host: together an eighth of the
   emulator's time in the profile. Patched: both lists are kept (classes and
   installed files do not change while serving).

The index is kept up to date where moto changes an item: Table.put_item (every
put, batch write, transaction put, and the new item of an update),
Table.delete_item, and DynamoDBBackend.update_item (which changes an item in
place). It lives beside the tables (a weak map), never in them, so pickled or
copied tables carry no index, and it is rebuilt from the table's items when
missing or when the table's indexes changed.

With PRICKLE_MOTO_CROSSCHECK=1 every narrowed Query also runs moto's own and
raises if the two differ (infra/dev/emulator/test_fastpaths.py runs that way).

apply() installs the patches; it is idempotent. The launcher calls it before
it serves. Pinned to moto 5.2.5 (infra/dev/requirements-local.txt): apply()
refuses another version, as the patched functions' signatures are moto's.
"""

import base64
import bisect
import copy
import inspect
import io
import json
import os
import re
import weakref

MOTO_VERSION = "5.2.5"

# DynamoDB (and Streams) calls that change nothing.
READ_ONLY_TARGETS = {
    "DynamoDB_20120810." + action
    for action in (
        "GetItem", "BatchGetItem", "TransactGetItems", "Query", "Scan",
        "DescribeTable", "DescribeTimeToLive", "DescribeContinuousBackups",
        "ListTables", "ListTagsOfResource", "DescribeEndpoints", "DescribeLimits",
    )
} | {
    "DynamoDBStreams_20120810." + action
    for action in ("DescribeStream", "GetRecords", "GetShardIterator", "ListStreams")
}

_applied = False
DynamoType = None  # moto's, set by apply(): moto must not be imported before the launcher configures it


class _PartitionIndex:
    """For each GSI of one table: partition key values -> the partition's
    items ({primary key: item}) and, for a GSI with a sort key, their keys in
    moto's Query order (a sorted list of (sort key values, primary key));
    per item, where it was filed."""

    def __init__(self, table):
        self.signature = _signature(table)
        self.parts = {name: {} for name, _, _ in self.signature}
        self.where = {}
        self.building = True
        for item in _live_items(table):
            self.file(table, item)
        self.building = False
        for buckets in self.parts.values():
            for bucket in buckets.values():
                bucket["order"].sort(key=lambda e: e[0])

    def file(self, table, item):
        pk = (item.hash_key, item.range_key)
        placed = self.where.setdefault(pk, {})
        for name, attrs, order in self.signature:
            key = _partition_of(item, attrs)
            rank = _rank_of(item, order) if key is not None and order else None
            if order and rank is None:
                key = None  # a GSI with a sort key holds only items with every key attribute
            if placed.get(name) == (key, rank):
                self.parts[name][key]["items"][pk] = item
                continue
            self._drop(name, pk, placed.pop(name, None))
            if key is None:
                continue
            bucket = self.parts[name].setdefault(key, {"items": {}, "order": []})
            bucket["items"][pk] = item
            if rank is not None and self.building:
                bucket["order"].append((rank, pk))
            elif rank is not None:
                bisect.insort(bucket["order"], (rank, pk), key=lambda e: e[0])
            placed[name] = (key, rank)

    def unfile(self, pk):
        for name, spot in self.where.pop(pk, {}).items():
            self._drop(name, pk, spot)

    def _drop(self, name, pk, spot):
        if spot is None:
            return
        key, rank = spot
        bucket = self.parts[name].get(key)
        if bucket is None:
            return
        bucket["items"].pop(pk, None)
        if rank is not None:
            order = bucket["order"]
            i = bisect.bisect_left(order, rank, key=lambda e: e[0])
            if i < len(order) and order[i][0] == rank:
                del order[i]
        if not bucket["items"]:
            del self.parts[name][key]


# The headers a recorded write keeps: what moto needs to route and answer it again.
_LOGGED_HEADERS = ("Host", "Content-Type", "X-Amz-Target")
_CREDENTIAL = re.compile(r"Credential=[^,\s]+")


def log_entry(headers, method, url, body):
    """The recorder's log entry of one write, in the format moto's recorder
    writes and the launcher replays, holding only what its replay needs."""
    kept = {name: headers[name] for name in _LOGGED_HEADERS if headers.get(name)}
    scope = _CREDENTIAL.search(headers.get("Authorization") or "")
    if scope:
        kept["Authorization"] = "AWS4-HMAC-SHA256 " + scope.group(0)
    if isinstance(body, str):
        body = body.encode("utf-8")
    try:
        text, encoded = body.decode("utf-8"), False
    except UnicodeDecodeError:
        text, encoded = base64.b64encode(body).decode("ascii"), True
    return {"headers": kept, "method": method, "url": url, "body": text, "body_encoded": encoded}


def _signature(table):
    """Per GSI: its name, partition key attributes, and the attributes moto's
    Query sorts its partition by (None for a GSI without a sort key)."""
    out = []
    for gsi in table.global_indexes or []:
        hashes = tuple(k["AttributeName"] for k in gsi.schema if k["KeyType"] == "HASH")
        ranges = [k["AttributeName"] for k in gsi.schema if k["KeyType"] == "RANGE"]
        order = None
        if ranges:
            order = tuple(ranges + [table.hash_key_attr] + ([table.range_key_attr] if table.range_key_attr else []))
        out.append((gsi.name, hashes, order))
    return tuple(out)


def _rank_of(item, attrs):
    """The item's sort key values in moto's order (DynamoType compares cast values), or None."""
    values = []
    for attr in attrs:
        value = item.attrs.get(attr)
        if value is None or value.type not in ("S", "N", "B"):
            return None
        values.append(value.cast_value)
    return tuple(values)


def _partition_of(item, attrs):
    values = []
    for attr in attrs:
        value = item.attrs.get(attr)
        if value is None:
            return None
        values.append(value)
    return tuple(values)


def _live_items(table):
    for part in table.items.values():
        if table.range_key_attr:
            yield from part.values()
        else:
            yield part


def _is_live(table, item):
    part = table.items.get(item.hash_key)
    if part is None:
        return False
    if table.range_key_attr:
        return part.get(item.range_key) is item
    return part is item


_indexes = weakref.WeakKeyDictionary()


def index_of(table):
    """The table's partition index, built (again) when missing or stale."""
    idx = _indexes.get(table)
    if idx is None or idx.signature != _signature(table):
        idx = _PartitionIndex(table)
        _indexes[table] = idx
    return idx


def _refile(table, item):
    idx = _indexes.get(table)
    if idx is not None and item is not None:
        idx.file(table, item)


def _candidates(table, asked):
    """The items moto's Query must look at, in all_items() order, or None
    when the query is one this patch does not narrow: the asked partition
    and, on a GSI with a sort key and no sort key condition, only the page
    asked for (Limit + 1 items after ExclusiveStartKey, in the asked
    direction), which is all moto's Query reads of it."""
    hash_key, index_name = asked.get("hash_key"), asked.get("index_name")
    if index_name is None:
        if hash_key is None:
            return None
        part = table.items.get(hash_key)
        if part is None:
            return []
        if not table.range_key_attr:
            return [part]
        return sorted(part.values(), key=lambda x: x.range_key)
    gsis = {name: (attrs, order) for name, attrs, order in _signature(table)}
    if index_name not in gsis:
        lsi_names = {i.name for i in (table.indexes or [])}
        if index_name in lsi_names and hash_key is not None:
            return _candidates(table, {"hash_key": hash_key})
        return None
    attrs, order = gsis[index_name]
    given = dict(asked.get("hash_key_conditions") or [])
    if set(given) != set(attrs):
        return None
    bucket = index_of(table).parts[index_name].get(tuple(given[a] for a in attrs))
    if bucket is None:
        return []
    entries = bucket["order"] if order else None
    limit = asked.get("limit")
    if entries is not None and limit and not asked.get("range_comparison") and not asked.get("filter_kwargs") and not asked.get("range_key_conditions"):
        start, end = 0, len(entries)
        esk = asked.get("exclusive_start_key")
        forward = asked.get("scan_index_forward", True) is not False
        if esk:
            if any(a not in esk for a in order):
                return _sorted_live(table, bucket)
            rank = tuple(DynamoType(esk[a]).cast_value for a in order)
            if forward:
                start = bisect.bisect_right(entries, rank, key=lambda e: e[0])
            else:
                end = bisect.bisect_left(entries, rank, key=lambda e: e[0])
        if forward:
            end = min(end, start + limit + 1)
        else:
            start = max(start, end - limit - 1)
        items = [bucket["items"][pk] for _, pk in entries[start:end]]
        if all(_is_live(table, item) for item in items):
            return sorted(items, key=lambda x: (x.hash_key, x.range_key) if x.range_key else x.hash_key)
    return _sorted_live(table, bucket)


def _sorted_live(table, bucket):
    items = [item for item in bucket["items"].values() if _is_live(table, item)]
    items.sort(key=lambda x: (x.hash_key, x.range_key) if x.range_key else x.hash_key)
    return items


def apply():
    """Install the patches into moto (once)."""
    global _applied, DynamoType
    if _applied:
        return
    from moto.dynamodb.models.dynamo_type import DynamoType
    crosscheck = os.environ.get("PRICKLE_MOTO_CROSSCHECK") == "1"
    import moto
    from moto.dynamodb import models as backend_models
    from moto.dynamodb.models import table as table_models
    from moto.dynamodb.models import DynamoDBBackend
    from moto.dynamodb.models.table import Table
    from moto.moto_api._internal.recorder.models import Recorder

    if moto.__version__ != MOTO_VERSION:
        raise RuntimeError(f"infra/dev/emulator/fastpaths.py patches moto {MOTO_VERSION}, found {moto.__version__}")

    original_query = Table.query
    query_signature = inspect.signature(original_query)

    def query(self, *args, **kwargs):
        asked = query_signature.bind(self, *args, **kwargs).arguments
        items = _candidates(self, asked)
        if items is None:
            return original_query(self, *args, **kwargs)
        # moto's Query takes its candidates from all_items(): hand it the partition.
        self.all_items = lambda: items
        _shallow_pages.active = True
        _sizes.memo = {}
        try:
            answer = original_query(self, *args, **kwargs)
        finally:
            _shallow_pages.active = False
            _sizes.memo = None
            del self.all_items
        if crosscheck:
            _crosscheck(answer, original_query(self, *args, **kwargs))
        return answer

    original_put = Table.put_item

    def put_item(self, *args, **kwargs):
        item = original_put(self, *args, **kwargs)
        _refile(self, item)
        return item

    original_delete = Table.delete_item

    def delete_item(self, hash_key, range_key):
        item = original_delete(self, hash_key, range_key)
        idx = _indexes.get(self)
        if idx is not None and item is not None:
            idx.unfile((item.hash_key, item.range_key))
        return item

    original_update = DynamoDBBackend.update_item

    def update_item(self, table_name, *args, **kwargs):
        item = original_update(self, table_name, *args, **kwargs)
        _refile(self.get_table(table_name), item)
        return item

    original_transact = DynamoDBBackend.transact_write_items

    def transact_write_items(self, transact_items):
        saved = []  # (table, hash key, range key, deep copy of the item or None)
        streams = {}
        for entry in transact_items:
            if not isinstance(entry, dict) or len(entry) != 1:
                continue
            op_type, op = next(iter(entry.items()))
            table = self.tables.get(op.get("TableName")) if isinstance(op, dict) else None
            if table is None:
                continue
            key = op.get("Item") if op_type == "Put" else op.get("Key")
            if not isinstance(key, dict) or table.hash_key_attr not in key:
                continue
            hash_key = DynamoType(key[table.hash_key_attr])
            range_key = None
            if table.range_key_attr is not None:
                if table.range_key_attr not in key:
                    continue
                range_key = DynamoType(key[table.range_key_attr])
            current = table.items.get(hash_key)
            if current is not None and table.range_key_attr is not None:
                current = current.get(range_key)
            saved.append((table, hash_key, range_key, copy.deepcopy(current)))
            if table.stream_shard is not None:
                streams[id(table)] = (table.stream_shard, len(table.stream_shard.items))
        _shallow_tables.active = True
        try:
            return original_transact(self, transact_items)
        except BaseException:
            for table, hash_key, range_key, before in reversed(saved):
                _restore(table, hash_key, range_key, before)
            for shard, length in streams.values():
                del shard.items[length:]
            raise
        finally:
            _shallow_tables.active = False

    # The transaction's whole-table backup: while a patched transaction runs,
    # a table "copied" by it is the table itself (the patch above rolls back).
    backend_models.copy = _shallow_tables
    table_models.copy = _shallow_pages

    original_record = Recorder._record_request

    def record_request(self, request, body=None):
        target = request.headers.get("X-Amz-Target")
        if target in READ_ONLY_TARGETS:
            return
        if not target or not self._user_enabled:
            return original_record(self, request, body)
        if body is None:
            length = int(request.headers.get("Content-Length") or 0)
            body = request.environ["wsgi.input"].read(length) if length else b""
            request.environ["wsgi.input"] = io.BytesIO(body)
        with open(self._location, "a+") as log:
            log.write(json.dumps(log_entry(request.headers, request.method, request.raw_url, body)))
            log.write("\n")

    from moto.core import responses as core_responses
    from moto.core.serialize import BaseJSONSerializer

    original_structure = BaseJSONSerializer._serialize_type_structure

    def serialize_type_structure(self, serialized, value, shape, key):
        if shape.name == "AttributeValue" and key and _wire_form(value):
            if crosscheck:
                want = {}
                original_structure(self, want, value, shape, key)
                if want != {self.get_serialized_name(shape, key): value}:
                    raise AssertionError(f"wire form {value!r} serialized by moto as {want!r}")
            self._default_serialize(serialized, value, shape, key)
            return
        original_structure(self, serialized, value, shape, key)

    method_names = {}
    original_method_names = core_responses.method_names_from_class

    def method_names_from_class(clazz):
        names = method_names.get(clazz)
        if names is None:
            names = method_names[clazz] = original_method_names(clazz)
        return list(names)

    from moto.dynamodb.models.dynamo_type import Item
    from moto.dynamodb.models.table import StreamRecord

    for untracked in (Item, StreamRecord):
        untracked.__new__ = _untracked_new

    original_size = Item.size

    def item_size(self):
        memo = _sizes.memo
        if memo is None:
            return original_size(self)
        size = memo.get(id(self))
        if size is None:
            size = memo[id(self)] = original_size(self)
        return size

    Item.size = item_size

    from moto.dynamodb.models.table import SecondaryIndex

    original_project = SecondaryIndex.project

    def project(self, item):
        names = _projected_names(self)
        if names is None:
            return original_project(self, item)
        twin = copy.copy(item)
        twin.attrs = {name: value for name, value in item.attrs.items() if name in names}
        if crosscheck:
            want = _canonical_item(original_project(self, item))
            if _canonical_item(twin) != want:
                raise AssertionError(f"index {self.name} projected {twin.to_json()!r}, moto {want!r}")
        return twin

    from moto import backends as moto_backends

    modules = tuple(moto_backends.list_of_moto_modules())
    moto_backends.list_of_moto_modules = lambda: modules

    BaseJSONSerializer._serialize_type_structure = serialize_type_structure
    core_responses.method_names_from_class = method_names_from_class
    Table.query = query
    SecondaryIndex.project = project
    Table.put_item = put_item
    Table.delete_item = delete_item
    DynamoDBBackend.update_item = update_item
    DynamoDBBackend.transact_write_items = transact_write_items
    Recorder._record_request = record_request
    _applied = True


_SCALAR_KINDS = {"S": str, "N": str, "BOOL": bool, "NULL": bool}
_SET_KINDS = {"SS", "NS"}


def _wire_form(value):
    """Whether value is an AttributeValue that moto's serializer would write as it is."""
    if not isinstance(value, dict) or len(value) != 1:
        return False
    (kind, inner), = value.items()
    scalar = _SCALAR_KINDS.get(kind)
    if scalar is not None:
        return type(inner) is scalar
    if kind in _SET_KINDS:
        return isinstance(inner, list) and all(type(v) is str for v in inner)
    if kind == "M":
        return isinstance(inner, dict) and all(type(k) is str and _wire_form(v) for k, v in inner.items())
    if kind == "L":
        return isinstance(inner, list) and all(_wire_form(v) for v in inner)
    return False


def _projected_names(index):
    """The attribute names an INCLUDE or KEYS_ONLY index keeps, or None when
    it keeps everything (ALL) or names a path (moto's own projection then)."""
    projection = index.projection or {}
    kind = projection.get("ProjectionType")
    if kind not in ("INCLUDE", "KEYS_ONLY"):
        return None
    names = list(index.table_key_attrs) + [key["AttributeName"] for key in index.schema]
    if kind == "INCLUDE":
        names += projection.get("NonKeyAttributes", [])
    if any("[" in name for name in names):
        return None
    return set(names)


def _canonical_item(item):
    """An Item's attributes as _canonical compares them."""
    return {name: _canonical(value) for name, value in item.to_json()["Attributes"].items()}


def _canonical(value):
    """An AttributeValue in wire form with its sets sorted and its numbers
    compared as numbers, as two equal DynamoDB values compare."""
    from decimal import Decimal

    if isinstance(value, dict) and len(value) == 1:
        (kind, inner), = value.items()
        if kind == "N":
            return ("N", Decimal(inner))
        if kind == "NS":
            return ("NS", sorted(Decimal(v) for v in inner))
        if kind in ("SS", "BS"):
            return (kind, sorted(inner))
        if kind == "L":
            return ("L", [_canonical(v) for v in inner])
        if kind == "M":
            return ("M", {k: _canonical(v) for k, v in inner.items()})
    return value


def _untracked_new(cls, *args, **kwargs):
    return object.__new__(cls)


def _crosscheck(got, want):
    """Raise when the narrowed Query answered otherwise than moto's own."""
    (got_items, got_scanned, got_last), (want_items, want_scanned, want_last) = got, want
    if [i.to_json() for i in got_items] != [i.to_json() for i in want_items] or got_scanned != want_scanned or got_last != want_last:
        raise AssertionError(f"narrowed Query answered {len(got_items)} items, moto's own {len(want_items)}")


def _restore(table, hash_key, range_key, before):
    if table.range_key_attr is None:
        if before is None:
            table.items.pop(hash_key, None)
        else:
            table.items[hash_key] = before
    else:
        part = table.items.setdefault(hash_key, {})
        if before is None:
            part.pop(range_key, None)
            if not part:
                del table.items[hash_key]
        else:
            part[range_key] = before
    idx = _indexes.get(table)
    if idx is not None:
        if before is None:
            idx.unfile((hash_key, range_key))
        else:
            idx.file(table, before)


class _ShallowTables:
    """Stands in for the copy module inside moto.dynamodb.models: deep copies
    as copy does, except a Table while a patched transaction runs."""

    active = False

    def deepcopy(self, value, memo=None):
        from moto.dynamodb.models.table import Table

        if self.active and isinstance(value, Table):
            return value
        return copy.deepcopy(value, memo)

    def __getattr__(self, name):
        return getattr(copy, name)


_shallow_tables = _ShallowTables()


class _ShallowPages:
    """Stands in for the copy module inside moto.dynamodb.models.table: deep
    copies as copy does, except a list of items while a narrowed Query runs,
    which it copies one level."""

    active = False

    def deepcopy(self, value, memo=None):
        from moto.dynamodb.models.dynamo_type import Item

        if self.active and isinstance(value, list) and all(type(v) is Item for v in value):
            return [_one_level(v) for v in value]
        return copy.deepcopy(value, memo)

    def __getattr__(self, name):
        return getattr(copy, name)


def _one_level(item):
    twin = copy.copy(item)
    twin.attrs = dict(item.attrs)
    return twin


_shallow_pages = _ShallowPages()


class _Sizes:
    """The sizes of the items a narrowed Query has weighed (by id: they all
    live until it ends), or None outside one."""

    memo = None


_sizes = _Sizes()
