-- What each number is (D20): every index's currency, what a price includes, where
-- prices come from, when a trading day's values are published (HH:MM in the service
-- time zone) and the methodology's version, edited by a super administrator.
--
-- Every price of the service is in US dollars; the composite has points only, and
-- states the currency of the indexes it is made of.
ALTER TABLE indexes
    ADD COLUMN currency text NOT NULL DEFAULT 'USD'
        CHECK (currency ~ '^[A-Z]{3}$'),
    ADD COLUMN price_basis text NOT NULL DEFAULT '',
    ADD COLUMN source text NOT NULL DEFAULT '',
    ADD COLUMN publish_time text NOT NULL DEFAULT '18:00'
        CHECK (publish_time ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'),
    ADD COLUMN methodology_version text NOT NULL DEFAULT '1.0';

UPDATE indexes AS i SET price_basis = f.price_basis, source = f.source
FROM (VALUES
    ('Server_Index',
     'Selling price of one complete 8-GPU server system as configured, excluding tax, shipping and support contracts',
     'Daily quotes from system integrators and distributors'),
    ('Server_Rental_Index',
     'Price of one GPU for one hour, on demand, excluding storage, networking egress and tax',
     'Daily list prices of cloud and GPU rental providers'),
    ('GPU_Index',
     'Unit price of one accelerator card or module, excluding tax and shipping',
     'Daily quotes from distributors and resellers'),
    ('DRAM_Index',
     'Unit price of one server memory module, excluding tax and shipping',
     'Daily quotes from distributors and resellers'),
    ('SSD_Index',
     'Unit price of one enterprise solid-state drive, excluding tax and shipping',
     'Daily quotes from distributors and resellers'),
    ('CPU_Index',
     'Unit price of one server processor (tray), excluding tax and shipping',
     'Daily quotes from distributors and resellers'),
    ('OI_Index',
     'Unit price of one optical transceiver module, excluding tax and shipping',
     'Daily quotes from distributors and resellers'),
    ('Hardware_Index',
     'Index points only: the weighted daily changes of the component indexes, whose prices are in US dollars',
     'Calculated from the server, GPU, memory, storage, processor and optical indexes')
) AS f (index_code, price_basis, source)
WHERE i.index_code = f.index_code;
