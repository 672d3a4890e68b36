"""Writes the bulk benchmarks' quotes (benches/sql/deep_pages.sh, arrow_pull.sh).

    python3 benches/sql/quotes.py OUT_FOLDER ROWS

Writes OUT_FOLDER/quotes.csv, an import file of at least ROWS quotes: 7 indexes x 100
specifications of weight 0.01 (a day's weights sum to 1) each weekday from 2021-01-04,
prices drawn with a fixed seed; prints the last trade date, YYYYMMDD.
"""

import datetime
import random
import sys

random.seed(14)
out, rows = sys.argv[1], int(sys.argv[2])
codes = ["Server_Index", "Server_Rental_Index", "GPU_Index", "DRAM_Index", "SSD_Index",
         "CPU_Index", "OI_Index"]
per_day = len(codes) * 100
d, n, last = datetime.date(2021, 1, 4), 0, None
with open(f"{out}/quotes.csv", "w") as f:
    f.write("trade_date,index_code,specification,weight,price\n")
    while n < rows:
        if d.weekday() < 5:
            for c in codes:
                for s in range(100):
                    f.write(f"{d:%Y%m%d},{c},spec {s:03d},0.01,{1000 + s * 10 + random.randint(0, 99)}.{random.randint(0, 99):02d}\n")
            n, last = n + per_day, d
        d += datetime.timedelta(days=1)
print(f"{last:%Y%m%d}")
