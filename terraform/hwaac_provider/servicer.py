"""The ``tf`` framework's gRPC servicer with one change: a create is planned by the resource too.

``tf`` 1.2.0 calls ``Resource.plan`` only for updates and plans a create as "config, computed values unknown"
(``PlanResourceChange`` in ``tf/provider.py``, github.com/hfern/tf). A fabric plane's summary (counts, loopbacks,
ASNs) is known before apply, and a pull request should show it, so creates go through ``plan(ctx, None, planned)``
as well (docs/terraform.md "Planning a create").
"""

from __future__ import annotations

from typing import Any

from tf.gen import tfplugin_pb2 as pb
from tf.iface import PlanContext
from tf.provider import ProviderServicer, _decode_state, _encode_state
from tf.utils import Diagnostics


class Servicer(ProviderServicer):
    def PlanResourceChange(self, request: pb.PlanResourceChange.Request, context: Any) -> Any:
        type_name = request.type_name
        attrs = self._get_res_attrs(type_name)
        blocks = self._get_res_blocks(type_name)
        diags = Diagnostics()
        _, prior = _decode_state(diags, attrs, blocks, request.prior_state)
        proposed_enc, proposed = _decode_state(diags, attrs, blocks, request.proposed_new_state)
        if diags.has_errors() or prior is not None or proposed is None:
            return super().PlanResourceChange(request, context)
        inst = self.app.new_resource(self._get_res_cls(type_name))
        planned = {
            k: (attrs[k].default if v is None and k in attrs and attrs[k].computed else v) for k, v in proposed.items()
        }
        planned = inst.plan(PlanContext(diags, type_name, changed_fields=set(planned)), None, planned)
        return pb.PlanResourceChange.Response(
            planned_state=_encode_state(attrs, blocks, planned, proposed_enc), diagnostics=diags.to_pb()
        )
