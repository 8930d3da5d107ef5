-- An ERP-shaped PostgreSQL schema for the storesync demo: the kind of database storesync reads but
-- does not own. Spanish quoted identifiers, prices in numeric (pg returns them as strings), a
-- "modified" timestamp kept by a trigger, and views shaped for config/examples/sql-source.yaml.
--
--   psql -h 127.0.0.1 -U postgres -d test -f examples/erp/postgres-schema.sql
--   psql -h 127.0.0.1 -U postgres -d test -c "SELECT erp_demo.simular_cambios(25)"   -- 25 random changes
--
-- Codes SKU-000001 … SKU-000200 match the simulator's seeded items. Re-running the script starts over.

DROP SCHEMA IF EXISTS erp_demo CASCADE;
CREATE SCHEMA erp_demo;
SET search_path TO erp_demo;

CREATE TABLE "Artículos" (
  "Código"        varchar(30)   PRIMARY KEY,
  "Descripción"   varchar(200)  NOT NULL,
  "Existencia"    integer       NOT NULL DEFAULT 0,
  "PrecioVenta"   numeric(12,2) NOT NULL,
  "PrecioLista"   numeric(12,2),
  "AlícuotaIVA"   numeric(5,2)  NOT NULL DEFAULT 21,
  "Publicado"     boolean       NOT NULL DEFAULT true,
  "Depósito"      varchar(10)   NOT NULL DEFAULT 'CENTRAL',
  -- Wall-clock time of the ERP server; the trigger below keeps it current. timestamptz would be
  -- safer, but ERPs rarely use it, and storesync reads both.
  "Modificado"    timestamp(3)  NOT NULL DEFAULT clock_timestamp()
);

-- Shipments of web sales, keyed by the store's sale id (for the fulfillment flow).
CREATE TABLE "Envíos" (
  "NroVentaWeb"   integer       PRIMARY KEY,
  "Estado"        integer       NOT NULL,
  "EstadoTexto"   varchar(60),
  "Seguimiento"   varchar(60),
  "Observación"   varchar(250),
  "Modificado"    timestamp(3)  NOT NULL DEFAULT clock_timestamp()
);

CREATE FUNCTION tocar_modificado() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW."Modificado" := clock_timestamp();
  RETURN NEW;
END;
$$;

CREATE TRIGGER "Artículos_modificado" BEFORE UPDATE ON "Artículos"
  FOR EACH ROW EXECUTE FUNCTION tocar_modificado();
CREATE TRIGGER "Envíos_modificado" BEFORE UPDATE ON "Envíos"
  FOR EACH ROW EXECUTE FUNCTION tocar_modificado();

-- The polls read by "Modificado": an index keeps them cheap on a large catalogue.
CREATE INDEX "Artículos_por_modificado" ON "Artículos" ("Modificado", "Código");
CREATE INDEX "Envíos_por_modificado" ON "Envíos" ("Modificado", "NroVentaWeb");

-- What storesync polls for inventory: one row per article, the columns under store-like names.
CREATE VIEW v_stock_changes AS
SELECT "Código"      AS code,
       "Existencia"  AS stock,
       "PrecioVenta" AS price,
       "PrecioLista" AS offer_price,
       "AlícuotaIVA" AS taxes,
       "Publicado"   AS published,
       "Depósito"    AS dep_stock,
       "Modificado"  AS cursor
FROM "Artículos";

-- What storesync polls for fulfillment.
CREATE VIEW v_envios AS
SELECT "NroVentaWeb" AS sale_id,
       "Estado"      AS status,
       "EstadoTexto" AS status_text,
       "Seguimiento" AS tracking_code,
       "Observación" AS observations,
       "Modificado"  AS cursor
FROM "Envíos";

-- 200 articles with deterministic stock and prices, modified over the last day.
INSERT INTO "Artículos" ("Código", "Descripción", "Existencia", "PrecioVenta", "PrecioLista", "AlícuotaIVA", "Publicado", "Depósito", "Modificado")
SELECT 'SKU-' || lpad(n::text, 6, '0'),
       'Artículo ' || n,
       (n * 37) % 250,
       round((900 + (n * 7919) % 150000)::numeric, 2) + 0.50,
       round((900 + (n * 7919) % 150000)::numeric * 1.2, 2),
       CASE WHEN n % 10 = 0 THEN 10.5 ELSE 21 END,
       n % 17 <> 0,
       CASE WHEN n % 3 = 0 THEN 'NORTE' ELSE 'CENTRAL' END,
       clock_timestamp() - interval '1 day' + n * interval '7 minutes'
FROM generate_series(1, 200) AS n;

-- Demo helper: `cantidad` random articles get a new stock (about one in five a new price too).
CREATE FUNCTION simular_cambios(cantidad integer) RETURNS integer LANGUAGE sql AS $$
  WITH elegidos AS (
    SELECT "Código" FROM erp_demo."Artículos" ORDER BY random() LIMIT cantidad
  )
  UPDATE erp_demo."Artículos" a
     SET "Existencia"  = floor(random() * 300)::integer,
         "PrecioVenta" = CASE WHEN random() < 0.2 THEN round(a."PrecioVenta" * 1.05, 2) ELSE a."PrecioVenta" END
    FROM elegidos e
   WHERE a."Código" = e."Código";
  SELECT cantidad;
$$;
