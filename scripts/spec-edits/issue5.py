# One-off edit of openapi/openapi.yaml for issue 5 (ordering, filters, conditional requests,
# idempotent creates), kept so that it can be re-applied on another branch. The spec stays
# hand-maintained; this only saved typing the same lines thirty times.
import re, sys

p = 'openapi/openapi.yaml'
s = open(p).read()
if 'Idempotency-Key' in s:
    sys.exit('already applied')

COLL = {
    'posts': ('Post', ['title', 'author'], ['posts_author']),
    'products': ('Product', ['name', 'price', 'stock'], ['products_min_price', 'products_max_price', 'products_in_stock']),
    'books': ('Book', ['title', 'author', 'published_date'], ['books_genre', 'books_author', 'books_published_after', 'books_published_before']),
    'users': ('User', ['username', 'email', 'last_name'], []),
    'tasks': ('Task', ['title', 'status', 'priority', 'due_date'], ['tasks_status', 'tasks_priority', 'tasks_due_after', 'tasks_due_before']),
}

def ref(kind, name):
    return "{ $ref: '#/components/%s/%s' }" % (kind, name)

paths_start = s.index('\npaths:\n')
for coll, (res, order_fields, filters) in COLL.items():
    start = s.index('  /api/%s/:\n' % coll, paths_start)
    end = s.index('\n  /', s.index('  /api/%s/{id}/:\n' % coll) + 5)
    b = s[start:end]
    # list: ordering and filters
    params = ['        - $ref: \'#/components/parameters/%s_ordering\'' % coll] + \
             ['        - $ref: \'#/components/parameters/%s\'' % f for f in filters]
    b = b.replace("        - $ref: '#/components/parameters/search'\n",
                  "        - $ref: '#/components/parameters/search'\n" + '\n'.join(params) + '\n', 1)
    # create: Idempotency-Key, ETag, 409, 422
    b = re.sub(r"(      operationId: create%s\n(?:      .*\n)*?)(      requestBody:)" % res,
               lambda m: m.group(1) + "      parameters:\n        - $ref: '#/components/parameters/idempotency_key'\n" + m.group(2), b, 1)
    b = b.replace("""            Location: { $ref: '#/components/headers/Location' }
""", """            Location: { $ref: '#/components/headers/Location' }
            ETag: { $ref: '#/components/headers/ETag' }
            Idempotent-Replayed: { $ref: '#/components/headers/Idempotent-Replayed' }
""", 1)
    i = b.index('operationId: create%s' % res)
    j = b.index("'413'", i)
    post_block = b[i:j]
    add = ''
    if "'409'" not in post_block:
        add += "        '409': { $ref: '#/components/responses/Conflict' }\n"
    b = b[:j - 8] + add + b[j - 8:]
    j = b.index("'500'", i)
    b = b[:j - 8] + "        '422': { $ref: '#/components/responses/IdempotencyKeyReused' }\n" + b[j - 8:]
    # item operations
    def item_op(b, op, param, extra_codes, etag):
        i = b.index('operationId: %s%s' % (op, res))
        k = b.index('      responses:\n', i)
        if op in ('replace', 'update'):
            k = b.index('      requestBody:\n', i)
        b = b[:k] + "      parameters:\n        - $ref: '#/components/parameters/%s'\n" % param + b[k:]
        if etag:
            r = b.index("        '200':\n", i)
            d = b.index('\n', b.index('description:', r)) + 1
            b = b[:d] + "          headers:\n            ETag: { $ref: '#/components/headers/ETag' }\n" + b[d:]
        for code, resp in extra_codes:
            # insert in numeric order among the operation's responses
            nxt = b.index('\n    ', b.index('operationId: %s%s' % (op, res))) if False else None
            i2 = b.index('operationId: %s%s' % (op, res))
            end_op = b.find('\n    delete:', i2)
            codes = [(int(m.group(1)), i2 + m.start()) for m in re.finditer(r"\n        '(\d{3})':", b[i2:end_op if end_op != -1 else len(b)])]
            pos = next((p for c, p in codes if c > code), None)
            line = "\n        '%d': { $ref: '#/components/responses/%s' }" % (code, resp)
            b = b[:pos] + line + b[pos:]
        return b
    b = item_op(b, 'get', 'if_none_match', [(304, 'NotModified')], True)
    b = item_op(b, 'replace', 'if_match', [(412, 'PreconditionFailed')], True)
    b = item_op(b, 'update', 'if_match', [(412, 'PreconditionFailed')], True)
    b = item_op(b, 'delete', 'if_match', [(412, 'PreconditionFailed')], False)
    s = s[:start] + b + s[end:]

open(p, 'w').write(s)
