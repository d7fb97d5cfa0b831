-- Star Schema Benchmark (O'Neil, O'Neil, Chen, Revision 3, 2009): the five tables, with
-- the columns in dbgen's .tbl order. Keys, numbers, money (integer cents) and dates
-- (yyyymmdd) are integers; strings are VARCHAR. Every value fits INTEGER at any scale
-- factor except lo_orderkey: it is the sparse order key (1.5M x SF orders, 8 of every 32
-- keys used, so up to ~6M x SF) and passes 2^31 - 1 above SF ~357, hence BIGINT.
-- The date table is named `date`, unquoted (DuckDB and DataFusion accept it).

create table lineorder (
    lo_orderkey      bigint not null,
    lo_linenumber    integer not null,
    lo_custkey       integer not null,
    lo_partkey       integer not null,
    lo_suppkey       integer not null,
    lo_orderdate     integer not null,
    lo_orderpriority varchar not null,
    lo_shippriority  integer not null,
    lo_quantity      integer not null,
    lo_extendedprice integer not null,
    lo_ordtotalprice integer not null,
    lo_discount      integer not null,
    lo_revenue       integer not null,
    lo_supplycost    integer not null,
    lo_tax           integer not null,
    lo_commitdate    integer not null,
    lo_shipmode      varchar not null
);

create table part (
    p_partkey   integer not null,
    p_name      varchar not null,
    p_mfgr      varchar not null,
    p_category  varchar not null,
    p_brand1    varchar not null,
    p_color     varchar not null,
    p_type      varchar not null,
    p_size      integer not null,
    p_container varchar not null
);

create table supplier (
    s_suppkey integer not null,
    s_name    varchar not null,
    s_address varchar not null,
    s_city    varchar not null,
    s_nation  varchar not null,
    s_region  varchar not null,
    s_phone   varchar not null
);

create table customer (
    c_custkey    integer not null,
    c_name       varchar not null,
    c_address    varchar not null,
    c_city       varchar not null,
    c_nation     varchar not null,
    c_region     varchar not null,
    c_phone      varchar not null,
    c_mktsegment varchar not null
);

create table date (
    d_datekey          integer not null,
    d_date             varchar not null,
    d_dayofweek        varchar not null,
    d_month            varchar not null,
    d_year             integer not null,
    d_yearmonthnum     integer not null,
    d_yearmonth        varchar not null,
    d_daynuminweek     integer not null,
    d_daynuminmonth    integer not null,
    d_daynuminyear     integer not null,
    d_monthnuminyear   integer not null,
    d_weeknuminyear    integer not null,
    d_sellingseason    varchar not null,
    d_lastdayinweekfl  integer not null,
    d_lastdayinmonthfl integer not null,
    d_holidayfl        integer not null,
    d_weekdayfl        integer not null
);
