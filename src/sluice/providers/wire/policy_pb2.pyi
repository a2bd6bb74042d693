from opentelemetry.proto.common.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class LogField(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    LOG_FIELD_UNSPECIFIED: _ClassVar[LogField]
    LOG_FIELD_BODY: _ClassVar[LogField]
    LOG_FIELD_SEVERITY_TEXT: _ClassVar[LogField]
    LOG_FIELD_TRACE_ID: _ClassVar[LogField]
    LOG_FIELD_SPAN_ID: _ClassVar[LogField]
    LOG_FIELD_EVENT_NAME: _ClassVar[LogField]
    LOG_FIELD_RESOURCE_SCHEMA_URL: _ClassVar[LogField]
    LOG_FIELD_SCOPE_SCHEMA_URL: _ClassVar[LogField]

class MetricField(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    METRIC_FIELD_UNSPECIFIED: _ClassVar[MetricField]
    METRIC_FIELD_NAME: _ClassVar[MetricField]
    METRIC_FIELD_DESCRIPTION: _ClassVar[MetricField]
    METRIC_FIELD_UNIT: _ClassVar[MetricField]
    METRIC_FIELD_RESOURCE_SCHEMA_URL: _ClassVar[MetricField]
    METRIC_FIELD_SCOPE_SCHEMA_URL: _ClassVar[MetricField]
    METRIC_FIELD_SCOPE_NAME: _ClassVar[MetricField]
    METRIC_FIELD_SCOPE_VERSION: _ClassVar[MetricField]

class MetricType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    METRIC_TYPE_UNSPECIFIED: _ClassVar[MetricType]
    METRIC_TYPE_GAUGE: _ClassVar[MetricType]
    METRIC_TYPE_SUM: _ClassVar[MetricType]
    METRIC_TYPE_HISTOGRAM: _ClassVar[MetricType]
    METRIC_TYPE_EXPONENTIAL_HISTOGRAM: _ClassVar[MetricType]
    METRIC_TYPE_SUMMARY: _ClassVar[MetricType]

class AggregationTemporality(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    AGGREGATION_TEMPORALITY_UNSPECIFIED: _ClassVar[AggregationTemporality]
    AGGREGATION_TEMPORALITY_DELTA: _ClassVar[AggregationTemporality]
    AGGREGATION_TEMPORALITY_CUMULATIVE: _ClassVar[AggregationTemporality]

class TraceField(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TRACE_FIELD_UNSPECIFIED: _ClassVar[TraceField]
    TRACE_FIELD_NAME: _ClassVar[TraceField]
    TRACE_FIELD_TRACE_ID: _ClassVar[TraceField]
    TRACE_FIELD_SPAN_ID: _ClassVar[TraceField]
    TRACE_FIELD_PARENT_SPAN_ID: _ClassVar[TraceField]
    TRACE_FIELD_TRACE_STATE: _ClassVar[TraceField]
    TRACE_FIELD_RESOURCE_SCHEMA_URL: _ClassVar[TraceField]
    TRACE_FIELD_SCOPE_SCHEMA_URL: _ClassVar[TraceField]
    TRACE_FIELD_SCOPE_NAME: _ClassVar[TraceField]
    TRACE_FIELD_SCOPE_VERSION: _ClassVar[TraceField]

class SpanKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SPAN_KIND_UNSPECIFIED: _ClassVar[SpanKind]
    SPAN_KIND_INTERNAL: _ClassVar[SpanKind]
    SPAN_KIND_SERVER: _ClassVar[SpanKind]
    SPAN_KIND_CLIENT: _ClassVar[SpanKind]
    SPAN_KIND_PRODUCER: _ClassVar[SpanKind]
    SPAN_KIND_CONSUMER: _ClassVar[SpanKind]

class SpanStatusCode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SPAN_STATUS_CODE_UNSPECIFIED: _ClassVar[SpanStatusCode]
    SPAN_STATUS_CODE_OK: _ClassVar[SpanStatusCode]
    SPAN_STATUS_CODE_ERROR: _ClassVar[SpanStatusCode]

class SamplingMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SAMPLING_MODE_UNSPECIFIED: _ClassVar[SamplingMode]
    SAMPLING_MODE_HASH_SEED: _ClassVar[SamplingMode]
    SAMPLING_MODE_PROPORTIONAL: _ClassVar[SamplingMode]
    SAMPLING_MODE_EQUALIZING: _ClassVar[SamplingMode]

class PolicyStage(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    POLICY_STAGE_UNSPECIFIED: _ClassVar[PolicyStage]
    POLICY_STAGE_LOG_FILTER: _ClassVar[PolicyStage]
    POLICY_STAGE_LOG_TRANSFORM: _ClassVar[PolicyStage]
    POLICY_STAGE_METRIC_FILTER: _ClassVar[PolicyStage]
    POLICY_STAGE_TRACE_SAMPLING: _ClassVar[PolicyStage]

class SyncType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SYNC_TYPE_UNSPECIFIED: _ClassVar[SyncType]
    SYNC_TYPE_FULL: _ClassVar[SyncType]
LOG_FIELD_UNSPECIFIED: LogField
LOG_FIELD_BODY: LogField
LOG_FIELD_SEVERITY_TEXT: LogField
LOG_FIELD_TRACE_ID: LogField
LOG_FIELD_SPAN_ID: LogField
LOG_FIELD_EVENT_NAME: LogField
LOG_FIELD_RESOURCE_SCHEMA_URL: LogField
LOG_FIELD_SCOPE_SCHEMA_URL: LogField
METRIC_FIELD_UNSPECIFIED: MetricField
METRIC_FIELD_NAME: MetricField
METRIC_FIELD_DESCRIPTION: MetricField
METRIC_FIELD_UNIT: MetricField
METRIC_FIELD_RESOURCE_SCHEMA_URL: MetricField
METRIC_FIELD_SCOPE_SCHEMA_URL: MetricField
METRIC_FIELD_SCOPE_NAME: MetricField
METRIC_FIELD_SCOPE_VERSION: MetricField
METRIC_TYPE_UNSPECIFIED: MetricType
METRIC_TYPE_GAUGE: MetricType
METRIC_TYPE_SUM: MetricType
METRIC_TYPE_HISTOGRAM: MetricType
METRIC_TYPE_EXPONENTIAL_HISTOGRAM: MetricType
METRIC_TYPE_SUMMARY: MetricType
AGGREGATION_TEMPORALITY_UNSPECIFIED: AggregationTemporality
AGGREGATION_TEMPORALITY_DELTA: AggregationTemporality
AGGREGATION_TEMPORALITY_CUMULATIVE: AggregationTemporality
TRACE_FIELD_UNSPECIFIED: TraceField
TRACE_FIELD_NAME: TraceField
TRACE_FIELD_TRACE_ID: TraceField
TRACE_FIELD_SPAN_ID: TraceField
TRACE_FIELD_PARENT_SPAN_ID: TraceField
TRACE_FIELD_TRACE_STATE: TraceField
TRACE_FIELD_RESOURCE_SCHEMA_URL: TraceField
TRACE_FIELD_SCOPE_SCHEMA_URL: TraceField
TRACE_FIELD_SCOPE_NAME: TraceField
TRACE_FIELD_SCOPE_VERSION: TraceField
SPAN_KIND_UNSPECIFIED: SpanKind
SPAN_KIND_INTERNAL: SpanKind
SPAN_KIND_SERVER: SpanKind
SPAN_KIND_CLIENT: SpanKind
SPAN_KIND_PRODUCER: SpanKind
SPAN_KIND_CONSUMER: SpanKind
SPAN_STATUS_CODE_UNSPECIFIED: SpanStatusCode
SPAN_STATUS_CODE_OK: SpanStatusCode
SPAN_STATUS_CODE_ERROR: SpanStatusCode
SAMPLING_MODE_UNSPECIFIED: SamplingMode
SAMPLING_MODE_HASH_SEED: SamplingMode
SAMPLING_MODE_PROPORTIONAL: SamplingMode
SAMPLING_MODE_EQUALIZING: SamplingMode
POLICY_STAGE_UNSPECIFIED: PolicyStage
POLICY_STAGE_LOG_FILTER: PolicyStage
POLICY_STAGE_LOG_TRANSFORM: PolicyStage
POLICY_STAGE_METRIC_FILTER: PolicyStage
POLICY_STAGE_TRACE_SAMPLING: PolicyStage
SYNC_TYPE_UNSPECIFIED: SyncType
SYNC_TYPE_FULL: SyncType

class AttributePath(_message.Message):
    __slots__ = ("path",)
    PATH_FIELD_NUMBER: _ClassVar[int]
    path: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, path: _Optional[_Iterable[str]] = ...) -> None: ...

class TypedValue(_message.Message):
    __slots__ = ("bool_value", "int_value", "double_value", "bytes_value", "hex_value", "string_value")
    BOOL_VALUE_FIELD_NUMBER: _ClassVar[int]
    INT_VALUE_FIELD_NUMBER: _ClassVar[int]
    DOUBLE_VALUE_FIELD_NUMBER: _ClassVar[int]
    BYTES_VALUE_FIELD_NUMBER: _ClassVar[int]
    HEX_VALUE_FIELD_NUMBER: _ClassVar[int]
    STRING_VALUE_FIELD_NUMBER: _ClassVar[int]
    bool_value: bool
    int_value: int
    double_value: float
    bytes_value: bytes
    hex_value: str
    string_value: str
    def __init__(self, bool_value: _Optional[bool] = ..., int_value: _Optional[int] = ..., double_value: _Optional[float] = ..., bytes_value: _Optional[bytes] = ..., hex_value: _Optional[str] = ..., string_value: _Optional[str] = ...) -> None: ...

class LogMatcher(_message.Message):
    __slots__ = ("log_field", "log_attribute", "resource_attribute", "scope_attribute", "exact", "regex", "exists", "starts_with", "ends_with", "contains", "equals", "gt", "gte", "lt", "lte", "negate", "case_insensitive")
    LOG_FIELD_FIELD_NUMBER: _ClassVar[int]
    LOG_ATTRIBUTE_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ATTRIBUTE_FIELD_NUMBER: _ClassVar[int]
    SCOPE_ATTRIBUTE_FIELD_NUMBER: _ClassVar[int]
    EXACT_FIELD_NUMBER: _ClassVar[int]
    REGEX_FIELD_NUMBER: _ClassVar[int]
    EXISTS_FIELD_NUMBER: _ClassVar[int]
    STARTS_WITH_FIELD_NUMBER: _ClassVar[int]
    ENDS_WITH_FIELD_NUMBER: _ClassVar[int]
    CONTAINS_FIELD_NUMBER: _ClassVar[int]
    EQUALS_FIELD_NUMBER: _ClassVar[int]
    GT_FIELD_NUMBER: _ClassVar[int]
    GTE_FIELD_NUMBER: _ClassVar[int]
    LT_FIELD_NUMBER: _ClassVar[int]
    LTE_FIELD_NUMBER: _ClassVar[int]
    NEGATE_FIELD_NUMBER: _ClassVar[int]
    CASE_INSENSITIVE_FIELD_NUMBER: _ClassVar[int]
    log_field: LogField
    log_attribute: AttributePath
    resource_attribute: AttributePath
    scope_attribute: AttributePath
    exact: str
    regex: str
    exists: bool
    starts_with: str
    ends_with: str
    contains: str
    equals: TypedValue
    gt: TypedValue
    gte: TypedValue
    lt: TypedValue
    lte: TypedValue
    negate: bool
    case_insensitive: bool
    def __init__(self, log_field: _Optional[_Union[LogField, str]] = ..., log_attribute: _Optional[_Union[AttributePath, _Mapping]] = ..., resource_attribute: _Optional[_Union[AttributePath, _Mapping]] = ..., scope_attribute: _Optional[_Union[AttributePath, _Mapping]] = ..., exact: _Optional[str] = ..., regex: _Optional[str] = ..., exists: _Optional[bool] = ..., starts_with: _Optional[str] = ..., ends_with: _Optional[str] = ..., contains: _Optional[str] = ..., equals: _Optional[_Union[TypedValue, _Mapping]] = ..., gt: _Optional[_Union[TypedValue, _Mapping]] = ..., gte: _Optional[_Union[TypedValue, _Mapping]] = ..., lt: _Optional[_Union[TypedValue, _Mapping]] = ..., lte: _Optional[_Union[TypedValue, _Mapping]] = ..., negate: _Optional[bool] = ..., case_insensitive: _Optional[bool] = ...) -> None: ...

class LogSampleKey(_message.Message):
    __slots__ = ("log_field", "log_attribute", "resource_attribute", "scope_attribute")
    LOG_FIELD_FIELD_NUMBER: _ClassVar[int]
    LOG_ATTRIBUTE_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ATTRIBUTE_FIELD_NUMBER: _ClassVar[int]
    SCOPE_ATTRIBUTE_FIELD_NUMBER: _ClassVar[int]
    log_field: LogField
    log_attribute: AttributePath
    resource_attribute: AttributePath
    scope_attribute: AttributePath
    def __init__(self, log_field: _Optional[_Union[LogField, str]] = ..., log_attribute: _Optional[_Union[AttributePath, _Mapping]] = ..., resource_attribute: _Optional[_Union[AttributePath, _Mapping]] = ..., scope_attribute: _Optional[_Union[AttributePath, _Mapping]] = ...) -> None: ...

class LogRemove(_message.Message):
    __slots__ = ("log_field", "log_attribute", "resource_attribute", "scope_attribute")
    LOG_FIELD_FIELD_NUMBER: _ClassVar[int]
    LOG_ATTRIBUTE_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ATTRIBUTE_FIELD_NUMBER: _ClassVar[int]
    SCOPE_ATTRIBUTE_FIELD_NUMBER: _ClassVar[int]
    log_field: LogField
    log_attribute: AttributePath
    resource_attribute: AttributePath
    scope_attribute: AttributePath
    def __init__(self, log_field: _Optional[_Union[LogField, str]] = ..., log_attribute: _Optional[_Union[AttributePath, _Mapping]] = ..., resource_attribute: _Optional[_Union[AttributePath, _Mapping]] = ..., scope_attribute: _Optional[_Union[AttributePath, _Mapping]] = ...) -> None: ...

class LogRedact(_message.Message):
    __slots__ = ("log_field", "log_attribute", "resource_attribute", "scope_attribute", "replacement", "regex")
    LOG_FIELD_FIELD_NUMBER: _ClassVar[int]
    LOG_ATTRIBUTE_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ATTRIBUTE_FIELD_NUMBER: _ClassVar[int]
    SCOPE_ATTRIBUTE_FIELD_NUMBER: _ClassVar[int]
    REPLACEMENT_FIELD_NUMBER: _ClassVar[int]
    REGEX_FIELD_NUMBER: _ClassVar[int]
    log_field: LogField
    log_attribute: AttributePath
    resource_attribute: AttributePath
    scope_attribute: AttributePath
    replacement: str
    regex: str
    def __init__(self, log_field: _Optional[_Union[LogField, str]] = ..., log_attribute: _Optional[_Union[AttributePath, _Mapping]] = ..., resource_attribute: _Optional[_Union[AttributePath, _Mapping]] = ..., scope_attribute: _Optional[_Union[AttributePath, _Mapping]] = ..., replacement: _Optional[str] = ..., regex: _Optional[str] = ...) -> None: ...

class LogRename(_message.Message):
    __slots__ = ("from_log_field", "from_log_attribute", "from_resource_attribute", "from_scope_attribute", "to", "upsert")
    FROM_LOG_FIELD_FIELD_NUMBER: _ClassVar[int]
    FROM_LOG_ATTRIBUTE_FIELD_NUMBER: _ClassVar[int]
    FROM_RESOURCE_ATTRIBUTE_FIELD_NUMBER: _ClassVar[int]
    FROM_SCOPE_ATTRIBUTE_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    UPSERT_FIELD_NUMBER: _ClassVar[int]
    from_log_field: LogField
    from_log_attribute: AttributePath
    from_resource_attribute: AttributePath
    from_scope_attribute: AttributePath
    to: str
    upsert: bool
    def __init__(self, from_log_field: _Optional[_Union[LogField, str]] = ..., from_log_attribute: _Optional[_Union[AttributePath, _Mapping]] = ..., from_resource_attribute: _Optional[_Union[AttributePath, _Mapping]] = ..., from_scope_attribute: _Optional[_Union[AttributePath, _Mapping]] = ..., to: _Optional[str] = ..., upsert: _Optional[bool] = ...) -> None: ...

class LogAdd(_message.Message):
    __slots__ = ("log_field", "log_attribute", "resource_attribute", "scope_attribute", "value", "upsert")
    LOG_FIELD_FIELD_NUMBER: _ClassVar[int]
    LOG_ATTRIBUTE_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ATTRIBUTE_FIELD_NUMBER: _ClassVar[int]
    SCOPE_ATTRIBUTE_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    UPSERT_FIELD_NUMBER: _ClassVar[int]
    log_field: LogField
    log_attribute: AttributePath
    resource_attribute: AttributePath
    scope_attribute: AttributePath
    value: str
    upsert: bool
    def __init__(self, log_field: _Optional[_Union[LogField, str]] = ..., log_attribute: _Optional[_Union[AttributePath, _Mapping]] = ..., resource_attribute: _Optional[_Union[AttributePath, _Mapping]] = ..., scope_attribute: _Optional[_Union[AttributePath, _Mapping]] = ..., value: _Optional[str] = ..., upsert: _Optional[bool] = ...) -> None: ...

class LogTransform(_message.Message):
    __slots__ = ("remove", "redact", "rename", "add")
    REMOVE_FIELD_NUMBER: _ClassVar[int]
    REDACT_FIELD_NUMBER: _ClassVar[int]
    RENAME_FIELD_NUMBER: _ClassVar[int]
    ADD_FIELD_NUMBER: _ClassVar[int]
    remove: _containers.RepeatedCompositeFieldContainer[LogRemove]
    redact: _containers.RepeatedCompositeFieldContainer[LogRedact]
    rename: _containers.RepeatedCompositeFieldContainer[LogRename]
    add: _containers.RepeatedCompositeFieldContainer[LogAdd]
    def __init__(self, remove: _Optional[_Iterable[_Union[LogRemove, _Mapping]]] = ..., redact: _Optional[_Iterable[_Union[LogRedact, _Mapping]]] = ..., rename: _Optional[_Iterable[_Union[LogRename, _Mapping]]] = ..., add: _Optional[_Iterable[_Union[LogAdd, _Mapping]]] = ...) -> None: ...

class LogTarget(_message.Message):
    __slots__ = ("match", "keep", "transform", "sample_key")
    MATCH_FIELD_NUMBER: _ClassVar[int]
    KEEP_FIELD_NUMBER: _ClassVar[int]
    TRANSFORM_FIELD_NUMBER: _ClassVar[int]
    SAMPLE_KEY_FIELD_NUMBER: _ClassVar[int]
    match: _containers.RepeatedCompositeFieldContainer[LogMatcher]
    keep: str
    transform: LogTransform
    sample_key: LogSampleKey
    def __init__(self, match: _Optional[_Iterable[_Union[LogMatcher, _Mapping]]] = ..., keep: _Optional[str] = ..., transform: _Optional[_Union[LogTransform, _Mapping]] = ..., sample_key: _Optional[_Union[LogSampleKey, _Mapping]] = ...) -> None: ...

class MetricMatcher(_message.Message):
    __slots__ = ("metric_field", "datapoint_attribute", "resource_attribute", "scope_attribute", "metric_type", "aggregation_temporality", "exact", "regex", "exists", "starts_with", "ends_with", "contains", "equals", "gt", "gte", "lt", "lte", "negate", "case_insensitive")
    METRIC_FIELD_FIELD_NUMBER: _ClassVar[int]
    DATAPOINT_ATTRIBUTE_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ATTRIBUTE_FIELD_NUMBER: _ClassVar[int]
    SCOPE_ATTRIBUTE_FIELD_NUMBER: _ClassVar[int]
    METRIC_TYPE_FIELD_NUMBER: _ClassVar[int]
    AGGREGATION_TEMPORALITY_FIELD_NUMBER: _ClassVar[int]
    EXACT_FIELD_NUMBER: _ClassVar[int]
    REGEX_FIELD_NUMBER: _ClassVar[int]
    EXISTS_FIELD_NUMBER: _ClassVar[int]
    STARTS_WITH_FIELD_NUMBER: _ClassVar[int]
    ENDS_WITH_FIELD_NUMBER: _ClassVar[int]
    CONTAINS_FIELD_NUMBER: _ClassVar[int]
    EQUALS_FIELD_NUMBER: _ClassVar[int]
    GT_FIELD_NUMBER: _ClassVar[int]
    GTE_FIELD_NUMBER: _ClassVar[int]
    LT_FIELD_NUMBER: _ClassVar[int]
    LTE_FIELD_NUMBER: _ClassVar[int]
    NEGATE_FIELD_NUMBER: _ClassVar[int]
    CASE_INSENSITIVE_FIELD_NUMBER: _ClassVar[int]
    metric_field: MetricField
    datapoint_attribute: AttributePath
    resource_attribute: AttributePath
    scope_attribute: AttributePath
    metric_type: MetricType
    aggregation_temporality: AggregationTemporality
    exact: str
    regex: str
    exists: bool
    starts_with: str
    ends_with: str
    contains: str
    equals: TypedValue
    gt: TypedValue
    gte: TypedValue
    lt: TypedValue
    lte: TypedValue
    negate: bool
    case_insensitive: bool
    def __init__(self, metric_field: _Optional[_Union[MetricField, str]] = ..., datapoint_attribute: _Optional[_Union[AttributePath, _Mapping]] = ..., resource_attribute: _Optional[_Union[AttributePath, _Mapping]] = ..., scope_attribute: _Optional[_Union[AttributePath, _Mapping]] = ..., metric_type: _Optional[_Union[MetricType, str]] = ..., aggregation_temporality: _Optional[_Union[AggregationTemporality, str]] = ..., exact: _Optional[str] = ..., regex: _Optional[str] = ..., exists: _Optional[bool] = ..., starts_with: _Optional[str] = ..., ends_with: _Optional[str] = ..., contains: _Optional[str] = ..., equals: _Optional[_Union[TypedValue, _Mapping]] = ..., gt: _Optional[_Union[TypedValue, _Mapping]] = ..., gte: _Optional[_Union[TypedValue, _Mapping]] = ..., lt: _Optional[_Union[TypedValue, _Mapping]] = ..., lte: _Optional[_Union[TypedValue, _Mapping]] = ..., negate: _Optional[bool] = ..., case_insensitive: _Optional[bool] = ...) -> None: ...

class MetricTarget(_message.Message):
    __slots__ = ("match", "keep")
    MATCH_FIELD_NUMBER: _ClassVar[int]
    KEEP_FIELD_NUMBER: _ClassVar[int]
    match: _containers.RepeatedCompositeFieldContainer[MetricMatcher]
    keep: bool
    def __init__(self, match: _Optional[_Iterable[_Union[MetricMatcher, _Mapping]]] = ..., keep: _Optional[bool] = ...) -> None: ...

class TraceMatcher(_message.Message):
    __slots__ = ("trace_field", "span_attribute", "resource_attribute", "scope_attribute", "span_kind", "span_status", "event_name", "event_attribute", "link_trace_id", "exact", "regex", "exists", "starts_with", "ends_with", "contains", "equals", "gt", "gte", "lt", "lte", "negate", "case_insensitive")
    TRACE_FIELD_FIELD_NUMBER: _ClassVar[int]
    SPAN_ATTRIBUTE_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ATTRIBUTE_FIELD_NUMBER: _ClassVar[int]
    SCOPE_ATTRIBUTE_FIELD_NUMBER: _ClassVar[int]
    SPAN_KIND_FIELD_NUMBER: _ClassVar[int]
    SPAN_STATUS_FIELD_NUMBER: _ClassVar[int]
    EVENT_NAME_FIELD_NUMBER: _ClassVar[int]
    EVENT_ATTRIBUTE_FIELD_NUMBER: _ClassVar[int]
    LINK_TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    EXACT_FIELD_NUMBER: _ClassVar[int]
    REGEX_FIELD_NUMBER: _ClassVar[int]
    EXISTS_FIELD_NUMBER: _ClassVar[int]
    STARTS_WITH_FIELD_NUMBER: _ClassVar[int]
    ENDS_WITH_FIELD_NUMBER: _ClassVar[int]
    CONTAINS_FIELD_NUMBER: _ClassVar[int]
    EQUALS_FIELD_NUMBER: _ClassVar[int]
    GT_FIELD_NUMBER: _ClassVar[int]
    GTE_FIELD_NUMBER: _ClassVar[int]
    LT_FIELD_NUMBER: _ClassVar[int]
    LTE_FIELD_NUMBER: _ClassVar[int]
    NEGATE_FIELD_NUMBER: _ClassVar[int]
    CASE_INSENSITIVE_FIELD_NUMBER: _ClassVar[int]
    trace_field: TraceField
    span_attribute: AttributePath
    resource_attribute: AttributePath
    scope_attribute: AttributePath
    span_kind: SpanKind
    span_status: SpanStatusCode
    event_name: str
    event_attribute: AttributePath
    link_trace_id: str
    exact: str
    regex: str
    exists: bool
    starts_with: str
    ends_with: str
    contains: str
    equals: TypedValue
    gt: TypedValue
    gte: TypedValue
    lt: TypedValue
    lte: TypedValue
    negate: bool
    case_insensitive: bool
    def __init__(self, trace_field: _Optional[_Union[TraceField, str]] = ..., span_attribute: _Optional[_Union[AttributePath, _Mapping]] = ..., resource_attribute: _Optional[_Union[AttributePath, _Mapping]] = ..., scope_attribute: _Optional[_Union[AttributePath, _Mapping]] = ..., span_kind: _Optional[_Union[SpanKind, str]] = ..., span_status: _Optional[_Union[SpanStatusCode, str]] = ..., event_name: _Optional[str] = ..., event_attribute: _Optional[_Union[AttributePath, _Mapping]] = ..., link_trace_id: _Optional[str] = ..., exact: _Optional[str] = ..., regex: _Optional[str] = ..., exists: _Optional[bool] = ..., starts_with: _Optional[str] = ..., ends_with: _Optional[str] = ..., contains: _Optional[str] = ..., equals: _Optional[_Union[TypedValue, _Mapping]] = ..., gt: _Optional[_Union[TypedValue, _Mapping]] = ..., gte: _Optional[_Union[TypedValue, _Mapping]] = ..., lt: _Optional[_Union[TypedValue, _Mapping]] = ..., lte: _Optional[_Union[TypedValue, _Mapping]] = ..., negate: _Optional[bool] = ..., case_insensitive: _Optional[bool] = ...) -> None: ...

class TraceSamplingConfig(_message.Message):
    __slots__ = ("percentage", "mode", "sampling_precision", "hash_seed", "fail_closed")
    PERCENTAGE_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    SAMPLING_PRECISION_FIELD_NUMBER: _ClassVar[int]
    HASH_SEED_FIELD_NUMBER: _ClassVar[int]
    FAIL_CLOSED_FIELD_NUMBER: _ClassVar[int]
    percentage: float
    mode: SamplingMode
    sampling_precision: int
    hash_seed: int
    fail_closed: bool
    def __init__(self, percentage: _Optional[float] = ..., mode: _Optional[_Union[SamplingMode, str]] = ..., sampling_precision: _Optional[int] = ..., hash_seed: _Optional[int] = ..., fail_closed: _Optional[bool] = ...) -> None: ...

class TraceTarget(_message.Message):
    __slots__ = ("match", "keep")
    MATCH_FIELD_NUMBER: _ClassVar[int]
    KEEP_FIELD_NUMBER: _ClassVar[int]
    match: _containers.RepeatedCompositeFieldContainer[TraceMatcher]
    keep: TraceSamplingConfig
    def __init__(self, match: _Optional[_Iterable[_Union[TraceMatcher, _Mapping]]] = ..., keep: _Optional[_Union[TraceSamplingConfig, _Mapping]] = ...) -> None: ...

class Policy(_message.Message):
    __slots__ = ("id", "name", "description", "enabled", "created_at_unix_nano", "modified_at_unix_nano", "labels", "log", "metric", "trace")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    ENABLED_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_UNIX_NANO_FIELD_NUMBER: _ClassVar[int]
    MODIFIED_AT_UNIX_NANO_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    LOG_FIELD_NUMBER: _ClassVar[int]
    METRIC_FIELD_NUMBER: _ClassVar[int]
    TRACE_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    description: str
    enabled: bool
    created_at_unix_nano: int
    modified_at_unix_nano: int
    labels: _containers.RepeatedCompositeFieldContainer[_common_pb2.KeyValue]
    log: LogTarget
    metric: MetricTarget
    trace: TraceTarget
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., description: _Optional[str] = ..., enabled: _Optional[bool] = ..., created_at_unix_nano: _Optional[int] = ..., modified_at_unix_nano: _Optional[int] = ..., labels: _Optional[_Iterable[_Union[_common_pb2.KeyValue, _Mapping]]] = ..., log: _Optional[_Union[LogTarget, _Mapping]] = ..., metric: _Optional[_Union[MetricTarget, _Mapping]] = ..., trace: _Optional[_Union[TraceTarget, _Mapping]] = ...) -> None: ...

class ClientMetadata(_message.Message):
    __slots__ = ("supported_policy_stages", "labels", "resource_attributes", "supported_extensions")
    SUPPORTED_POLICY_STAGES_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    SUPPORTED_EXTENSIONS_FIELD_NUMBER: _ClassVar[int]
    supported_policy_stages: _containers.RepeatedScalarFieldContainer[PolicyStage]
    labels: _containers.RepeatedCompositeFieldContainer[_common_pb2.KeyValue]
    resource_attributes: _containers.RepeatedCompositeFieldContainer[_common_pb2.KeyValue]
    supported_extensions: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, supported_policy_stages: _Optional[_Iterable[_Union[PolicyStage, str]]] = ..., labels: _Optional[_Iterable[_Union[_common_pb2.KeyValue, _Mapping]]] = ..., resource_attributes: _Optional[_Iterable[_Union[_common_pb2.KeyValue, _Mapping]]] = ..., supported_extensions: _Optional[_Iterable[str]] = ...) -> None: ...

class TransformStageStatus(_message.Message):
    __slots__ = ("hits", "misses")
    HITS_FIELD_NUMBER: _ClassVar[int]
    MISSES_FIELD_NUMBER: _ClassVar[int]
    hits: int
    misses: int
    def __init__(self, hits: _Optional[int] = ..., misses: _Optional[int] = ...) -> None: ...

class PolicySyncStatus(_message.Message):
    __slots__ = ("id", "match_hits", "match_misses", "errors", "remove", "redact", "rename", "add")
    ID_FIELD_NUMBER: _ClassVar[int]
    MATCH_HITS_FIELD_NUMBER: _ClassVar[int]
    MATCH_MISSES_FIELD_NUMBER: _ClassVar[int]
    ERRORS_FIELD_NUMBER: _ClassVar[int]
    REMOVE_FIELD_NUMBER: _ClassVar[int]
    REDACT_FIELD_NUMBER: _ClassVar[int]
    RENAME_FIELD_NUMBER: _ClassVar[int]
    ADD_FIELD_NUMBER: _ClassVar[int]
    id: str
    match_hits: int
    match_misses: int
    errors: _containers.RepeatedScalarFieldContainer[str]
    remove: TransformStageStatus
    redact: TransformStageStatus
    rename: TransformStageStatus
    add: TransformStageStatus
    def __init__(self, id: _Optional[str] = ..., match_hits: _Optional[int] = ..., match_misses: _Optional[int] = ..., errors: _Optional[_Iterable[str]] = ..., remove: _Optional[_Union[TransformStageStatus, _Mapping]] = ..., redact: _Optional[_Union[TransformStageStatus, _Mapping]] = ..., rename: _Optional[_Union[TransformStageStatus, _Mapping]] = ..., add: _Optional[_Union[TransformStageStatus, _Mapping]] = ...) -> None: ...

class SyncRequest(_message.Message):
    __slots__ = ("client_metadata", "full_sync", "last_sync_timestamp_unix_nano", "last_successful_hash", "policy_statuses")
    CLIENT_METADATA_FIELD_NUMBER: _ClassVar[int]
    FULL_SYNC_FIELD_NUMBER: _ClassVar[int]
    LAST_SYNC_TIMESTAMP_UNIX_NANO_FIELD_NUMBER: _ClassVar[int]
    LAST_SUCCESSFUL_HASH_FIELD_NUMBER: _ClassVar[int]
    POLICY_STATUSES_FIELD_NUMBER: _ClassVar[int]
    client_metadata: ClientMetadata
    full_sync: bool
    last_sync_timestamp_unix_nano: int
    last_successful_hash: str
    policy_statuses: _containers.RepeatedCompositeFieldContainer[PolicySyncStatus]
    def __init__(self, client_metadata: _Optional[_Union[ClientMetadata, _Mapping]] = ..., full_sync: _Optional[bool] = ..., last_sync_timestamp_unix_nano: _Optional[int] = ..., last_successful_hash: _Optional[str] = ..., policy_statuses: _Optional[_Iterable[_Union[PolicySyncStatus, _Mapping]]] = ...) -> None: ...

class SyncResponse(_message.Message):
    __slots__ = ("policies", "hash", "sync_timestamp_unix_nano", "recommended_sync_interval_seconds", "sync_type", "error_message")
    POLICIES_FIELD_NUMBER: _ClassVar[int]
    HASH_FIELD_NUMBER: _ClassVar[int]
    SYNC_TIMESTAMP_UNIX_NANO_FIELD_NUMBER: _ClassVar[int]
    RECOMMENDED_SYNC_INTERVAL_SECONDS_FIELD_NUMBER: _ClassVar[int]
    SYNC_TYPE_FIELD_NUMBER: _ClassVar[int]
    ERROR_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    policies: _containers.RepeatedCompositeFieldContainer[Policy]
    hash: str
    sync_timestamp_unix_nano: int
    recommended_sync_interval_seconds: int
    sync_type: SyncType
    error_message: str
    def __init__(self, policies: _Optional[_Iterable[_Union[Policy, _Mapping]]] = ..., hash: _Optional[str] = ..., sync_timestamp_unix_nano: _Optional[int] = ..., recommended_sync_interval_seconds: _Optional[int] = ..., sync_type: _Optional[_Union[SyncType, str]] = ..., error_message: _Optional[str] = ...) -> None: ...
